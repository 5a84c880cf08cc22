# Sourced by the desktop's init (init.sh): machine_name SOCKET FILE writes the machine's display name, the
# instance's user.hyperdesk.name asked of the engine's guest API on SOCKET (root only: /dev/lxd/sock under LXD,
# /dev/incus/sock under Incus), into FILE, at most 200 bytes. The daemon answers it itself, and while a class of 40
# starts on a small host it may not in time: asked once and given 2 s, one desktop of 40 went on as "Hyperdesk". So
# it is asked again, each time given 4 s, five times at most. Returns 1 when no name came (the session then shows "Hyperdesk").
machine_name() {
  local socket=$1 file=$2 try answer
  for try in 1 2 3 4 5; do
    [ -S "$socket" ] || return 1
    answer="$(printf 'GET /1.0/config/user.hyperdesk.name HTTP/1.0\r\nHost: guest\r\n\r\n' | socat -t 4 - "UNIX-CONNECT:$socket" 2>/dev/null)"
    case "$answer" in
      "HTTP/1."?" 200"*) answer="${answer#*$'\r\n\r\n'}"; printf '%s' "${answer:0:200}" > "$file"; return 0 ;;
      ""|"HTTP/1."?" 5"*) ;; # no answer in time, or the daemon's own error: ask again
      *) return 1 ;; # an answer that is no name (404: the instance has none)
    esac
    read -t 0.5 <> <(:) || true
  done
  return 1
}
