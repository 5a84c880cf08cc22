import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import net from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * Where the gateway reaches a desktop's service (its VNC server or its streaming agent): `ref` says where (kept in
 * the machine row, for operators), `open()` opens a byte stream there. The stream emits 'connect' once it is
 * usable, like a net.Socket; a provider opens it through whatever channel it trusts (a socket only the server can
 * open, or the engine's authenticated API), so callers never touch a path a tenant can write.
 */
export interface Endpoint {
  ref: Record<string, string | number>;
  open(): Duplex;
}

/** O_PATH (Linux): a handle on the file itself, enough to connect to a socket through /proc/self/fd. */
const O_PATH = 0o10000000;

/**
 * A Unix socket that must be `owner`'s own socket file. Its directory may be writable by that user (a desktop's
 * run dir), so the name is resolved once without following a link (O_PATH|O_NOFOLLOW), the handle is checked to be
 * a socket owned by `owner`, and the connection goes to that very inode (/proc/self/fd/N): a symlink or a swapped
 * file planted by the tenant fails the check instead of leading the server to another machine's or root's socket.
 * Hard links to others' sockets are refused by the kernel (fs.protected_hardlinks) and would fail the owner check.
 */
export function ownedUnixSocket(path: string, owner: number): Endpoint {
  return {
    ref: { path, owner },
    open() {
      let fd: number;
      try {
        fd = openSync(path, O_PATH | constants.O_NOFOLLOW);
      } catch (err) {
        return failed(err as Error);
      }
      const st = fstatSync(fd);
      if (!st.isSocket() || st.uid !== owner) {
        closeSync(fd);
        return failed(new Error(`${path} is not a socket of uid ${owner}`));
      }
      const sock = net.connect({ path: `/proc/self/fd/${fd}` });
      const release = () => {
        if (fd < 0) return;
        closeSync(fd);
        fd = -1;
      };
      sock.once('connect', release);
      sock.once('close', release);
      return sock;
    },
  };
}

export function tcpEndpoint(host: string, port: number): Endpoint {
  return { ref: { host, port }, open: () => net.connect({ host, port }) };
}

/** A socket that fails at once with err (emitted on the next tick, as a refused connection would be). */
function failed(err: Error): Duplex {
  const sock = new net.Socket();
  process.nextTick(() => sock.destroy(err));
  return sock;
}
