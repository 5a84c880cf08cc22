"""What the agent accepts from the viewer and the gateway: bounded numbers, and no ICE server or remote candidate
that points at this machine itself (loopback, link-local, its own addresses), whose services a viewer could then
reach through the agent's UDP checks or TURN allocations."""
import ipaddress
import time

# One data channel message at most (a pasted text is the biggest: 1 MiB of UTF-8 and its JSON quoting).
MAX_INPUT_MESSAGE = 3 * 1024 * 1024
# New viewers ('start') one signaling connection may ask for: a burst, then one every RENEGOTIATE_EVERY_S.
RENEGOTIATE_BURST = 5
RENEGOTIATE_EVERY_S = 10.0
# ICE candidates one viewer may hand over.
MAX_REMOTE_CANDIDATES = 64


def number(v, lo, hi):
    """An int within [lo, hi] from a JSON number; ValueError for anything else (bool, NaN, ±inf, 1e400, 10**400)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError('not a number')
    if isinstance(v, float) and not (v == v and abs(v) < 1e15):
        raise ValueError('not a finite number')
    if not lo <= v <= hi:
        raise ValueError('out of range')
    return int(v)


class Budget:
    """A token bucket: `burst` at once, then one every `every_s` seconds."""

    def __init__(self, burst, every_s, clock=time.monotonic):
        self.burst = burst
        self.every = every_s
        self.clock = clock
        self.tokens = float(burst)
        self.at = clock()

    def take(self):
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) / self.every)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


def own_addresses():
    """This machine's own interface addresses (IPv4 and IPv6), from the kernel (no extra package)."""
    out = set()
    try:
        with open('/proc/net/if_inet6') as f:
            for line in f:
                h = line.split()[0]
                out.add(ipaddress.ip_address(':'.join(h[i:i + 4] for i in range(0, 32, 4))))
    except OSError:
        pass
    try:
        # IPv4: the local routing table's 'local' entries (fib_trie lists each as "/32 host LOCAL").
        with open('/proc/net/fib_trie') as f:
            last = None
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0] in ('|--', '+--'):
                    last = parts[1].split('/')[0]
                elif '/32 host LOCAL' in line and last:
                    out.add(ipaddress.ip_address(last))
    except (OSError, ValueError):
        pass
    return out


def forbidden_ip(addr, own):
    """Whether an address names this machine: loopback, link-local, unspecified, multicast or one of its own."""
    try:
        ip = ipaddress.ip_address(addr.split('%', 1)[0])
    except ValueError:
        return False  # not an address (an mDNS name): nothing of ours
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast or ip in own


def candidate_ok(candidate, own):
    """A remote ICE candidate line ('candidate:… 1 udp 2122260223 10.0.0.2 50000 typ host …') the agent may use."""
    if not isinstance(candidate, str) or not candidate or len(candidate) > 1024:
        return False
    parts = candidate.split()
    if len(parts) < 8 or parts[6] != 'typ':
        return False
    try:
        port = int(parts[5])
    except ValueError:
        return False
    return 0 < port < 65536 and not forbidden_ip(parts[4], own)


def server_host_ok(url, own):
    """A stun:/turn:/turns: URL whose host does not name this machine. Names are not resolved (that would block the
    agent's loop); only 'localhost' is known to name it."""
    if not isinstance(url, str) or ':' not in url or len(url) > 1024:
        return False
    rest = url.split(':', 1)[1].split('?', 1)[0].lstrip('/')
    rest = rest.rsplit('@', 1)[-1]
    if rest.startswith('['):
        host = rest[1:].split(']', 1)[0]
    else:
        host = rest.rsplit(':', 1)[0] if rest.count(':') == 1 else rest
    host = host.lower().rstrip('.')
    if not host or host == 'localhost' or host.endswith('.localhost'):
        return False
    return not forbidden_ip(host, own)
