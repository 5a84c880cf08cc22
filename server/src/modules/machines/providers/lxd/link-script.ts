import { SOCKET_WAIT_S } from './exec-stream';

/**
 * The program at the desktop's end of its link (python3 -c, as the desktop's user, uid 1000, through one long-lived
 * LXD exec per running desktop; the server's end is ./link.ts). Over its stdin and stdout it carries many byte
 * streams to the desktop's two sockets (VNC and the streaming agent), so a viewer connecting costs a frame on a
 * stream that is already open instead of an exec of its own (a process forked in the instance, four websockets and
 * LXD's bookkeeping: seconds when a class of 40 connects at once). It also asks the VNC server for its greeting
 * (every 0.05 s from the start until it first answers, then every few seconds) and says whether it answered (the
 * reconciler's look), and beats every second between.
 *
 * Frames, both ways: type (1 byte), channel (4 bytes), length (4 bytes), payload (at most 64 KiB). Each side may
 * send a channel's data only within the window the other granted (256 KiB, given back with CREDIT as it is
 * delivered), so one slow viewer never makes either end buffer without bound. The server names a socket by number
 * (1 VNC, 2 agent): nothing it sends is a path. The tenant can end or replace this program; the server treats its
 * frames as untrusted (see link.ts) and falls back to an exec per connection.
 */
export const LINK_SCRIPT = String.raw`
import os, select, selectors, socket, struct, sys, time
SOCKETS = {1: '/run/hyperdesk/vnc.sock', 2: '/run/hyperdesk/agent.sock'}
OPEN, DATA, CLOSE, CREDIT, OPENED, HEALTH = 1, 2, 3, 4, 5, 6
HDR = struct.Struct('>BII')
# WAIT_S: how long an OPEN marked 'w' waits for its socket (exec-stream.ts SOCKET_WAIT_S).
MAX, WINDOW, WAIT_S, EVERY_S = 65536, 262144, ${SOCKET_WAIT_S}, float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
# Until VNC first answers: how often to look (a missing socket costs nothing), and say 'down' at most once a second.
STARTING_S, DOWN_EVERY_S = 0.05, 1.0
sel = selectors.DefaultSelector()
chans, waiting, early = {}, {}, {}

def send(kind, ch, payload=b''):
    view = memoryview(HDR.pack(kind, ch, len(payload)) + payload)
    while view:
        try:
            view = view[os.write(1, view):]
        except BlockingIOError:
            select.select([], [1], [])

class Chan:
    def __init__(self, ch, sock):
        self.ch, self.sock, self.credit, self.out = ch, sock, WINDOW, bytearray()
        self.events = 0
        self.update()
    def update(self):
        ev = (selectors.EVENT_READ if self.credit > 0 else 0) | (selectors.EVENT_WRITE if self.out else 0)
        if ev == self.events:
            return
        if self.events and ev:
            sel.modify(self.sock, ev, self)
        elif ev:
            sel.register(self.sock, ev, self)
        else:
            sel.unregister(self.sock)
        self.events = ev
    def close(self, tell=True):
        if self.events:
            sel.unregister(self.sock)
        self.sock.close()
        chans.pop(self.ch, None)
        if tell:
            send(CLOSE, self.ch)
    def readable(self):
        try:
            data = self.sock.recv(min(self.credit, MAX))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b''
        if not data:
            return self.close()
        self.credit -= len(data)
        send(DATA, self.ch, data)
        self.update()
    def writable(self):
        try:
            n = self.sock.send(self.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return self.close()
        del self.out[:n]
        send(CREDIT, self.ch, struct.pack('>I', n))
        self.update()

def try_open(ch, which):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(SOCKETS[which])
    except OSError:
        s.close()
        return False
    s.setblocking(False)
    chans[ch] = c = Chan(ch, s)
    send(OPENED, ch)
    if ch in early:
        c.out += early.pop(ch)
        c.update()
    return True

def frame(kind, ch, payload):
    if kind == OPEN:
        which = payload[0] if payload else 0
        if which not in SOCKETS or ch in chans or ch in waiting:
            return send(CLOSE, ch)
        if not try_open(ch, which):
            waiting[ch] = (which, time.monotonic() + (WAIT_S if payload[1:2] == b'w' else 0))
    elif kind == DATA and ch in chans:
        c = chans[ch]
        c.out += payload
        c.update()
    elif kind == DATA and ch in waiting:
        early.setdefault(ch, bytearray()).extend(payload)
    elif kind == CLOSE:
        waiting.pop(ch, None)
        early.pop(ch, None)
        if ch in chans:
            chans[ch].close(tell=False)
    elif kind == CREDIT and ch in chans and len(payload) == 4:
        c = chans[ch]
        c.credit += struct.unpack('>I', payload)[0]
        c.update()

def retry_waiting(now):
    for ch, (which, until) in list(waiting.items()):
        if try_open(ch, which):
            del waiting[ch]
        elif now >= until:
            del waiting[ch]
            early.pop(ch, None)
            send(CLOSE, ch)

class Probe:
    def __init__(self):
        self.sock, self.got, self.deadline, self.said_down = None, b'', 0, -DOWN_EVERY_S
    def begin(self, now):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(SOCKETS[1])
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            s.close()
            if seen_up or now - self.said_down >= DOWN_EVERY_S:
                self.said_down = now
                send(HEALTH, 0, b'down')
            return
        self.sock, self.got, self.deadline = s, b'', now + 3
        sel.register(s, selectors.EVENT_READ, self)
    def end(self, up):
        global seen_up
        sel.unregister(self.sock)
        self.sock.close()
        self.sock = None
        seen_up = seen_up or up
        send(HEALTH, 0, b'up' if up else b'down')
    def readable(self):
        try:
            data = self.sock.recv(12 - len(self.got))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b''
        self.got += data
        if not data or len(self.got) >= 12:
            self.end(self.got.startswith(b'RFB 003'))
    def tick(self, now):
        if self.sock and now >= self.deadline:
            self.end(False)

probe, seen_up = Probe(), False
os.set_blocking(0, False)
sel.register(0, selectors.EVENT_READ, None)
buf, next_probe, next_beat = bytearray(), 0.0, 0.0
while True:
    now = time.monotonic()
    if now >= next_probe and not probe.sock:
        probe.begin(now)
        next_probe = now + (EVERY_S if seen_up else STARTING_S)
    elif now >= next_beat:
        send(HEALTH, 0, b'beat')
    if now >= next_beat:
        next_beat = now + 1
    probe.tick(now)
    retry_waiting(now)
    for key, ev in sel.select(STARTING_S if not seen_up else 0.1 if waiting else 0.25):
        if key.data is None:
            try:
                data = os.read(0, 262144)
            except BlockingIOError:
                continue
            if not data:
                sys.exit(0)
            buf += data
            while len(buf) >= HDR.size:
                kind, ch, n = HDR.unpack_from(buf)
                if n > MAX:
                    sys.exit(2)
                if len(buf) < HDR.size + n:
                    break
                payload = bytes(buf[HDR.size:HDR.size + n])
                del buf[:HDR.size + n]
                frame(kind, ch, payload)
        elif isinstance(key.data, Probe):
            key.data.readable()
        else:
            c = key.data
            if ev & selectors.EVENT_WRITE and c.ch in chans:
                c.writable()
            if ev & selectors.EVENT_READ and c.ch in chans:
                c.readable()
`;
