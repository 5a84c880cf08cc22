import https from 'node:https';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { WebSocket, type ClientOptions } from 'ws';

/**
 * A client of the LXD REST API (Incus 6 serves the same /1.0 API) over HTTPS with a client certificate. The
 * deployment's certificate is trusted by the daemon for one project only (`--restricted --projects`), so whatever
 * this process does, it can touch no other deployment's instances and nothing on the host: the server runs as an
 * unprivileged user. The daemon's own certificate is pinned (it is the only CA accepted).
 */
export interface LxdConnection {
  /** https://host:port of the daemon (or of any member of a cluster). */
  url: string;
  project: string;
  cert: string | Buffer;
  key: string | Buffer;
  /** The daemon's certificate (PEM): the only one accepted. */
  serverCert: string | Buffer;
}

/** LXD_CERT_DIR holds client.crt, client.key and server.crt, as scripts/lxd/host-setup.sh leaves them. */
export function connectionFromDir(url: string, project: string, dir: string): LxdConnection {
  const read = (f: string) => {
    try {
      return readFileSync(path.join(dir, f));
    } catch (err) {
      throw new Error(`MACHINE_PROVIDER=lxd needs ${path.join(dir, f)} (${(err as NodeJS.ErrnoException).code}): start the server with npm start as root, which prepares LXD (scripts/lxd/host-setup.sh)`, { cause: err });
    }
  };
  return { url, project, cert: read('client.crt'), key: read('client.key'), serverCert: read('server.crt') };
}

export class LxdError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The thing asked about does not exist (any more). */
export const notFound = (err: unknown) => err instanceof LxdError && err.status === 404;
/** LXD's answer to making what is there already (another server made it first). */
export const alreadyExists = (err: unknown) => (err instanceof LxdError && err.status === 409) || /already exists/i.test((err as Error)?.message ?? '');
/** LXD refuses a change to an instance while another operation runs on it (a create that a killed server began). */
export const busy = (err: unknown) => /is busy running an? "?\w+"? operation/i.test((err as Error)?.message ?? '');
/** A delete of something already gone is done. */
export const ignoreMissing = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => {
      if (!notFound(err)) throw err;
    },
  );
/** The query that sends a request to one cluster member (`target`), or none ('' on one host). */
export const at = (target: string) => (target ? `?target=${encodeURIComponent(target)}` : '');

interface LxdResponse<T> {
  type: 'sync' | 'async' | 'error';
  status_code: number;
  error_code?: number;
  error?: string;
  metadata: T;
  operation?: string;
}

export interface Operation {
  id: string;
  status: string;
  status_code: number;
  err: string;
  metadata: Record<string, unknown> | null;
}

export interface LxdClient {
  readonly project: string;
  get<T>(p: string): Promise<T>;
  /** A request; an async answer is waited for (up to waitS seconds) and its operation returned. */
  send<T = Operation>(method: string, p: string, body?: unknown, waitS?: number): Promise<T>;
  /** Starts an async request and returns its operation at once (exec needs its websocket secrets). */
  begin(method: string, p: string, body?: unknown): Promise<Operation>;
  websocket(operationId: string, secret: string): WebSocket;
  close(): void;
}

/** GET /1.0/operations/<id>/wait: answered when the operation ends (or its timeout passes). */
const isWait = (p: string) => /^\/1\.0\/operations\/[^/]+\/wait(\?|$)/.test(p);

export function createLxdClient(c: LxdConnection): LxdClient {
  const base = new URL(c.url);
  const tls = { cert: c.cert, key: c.key, ca: c.serverCert, checkServerIdentity: () => undefined };
  const agent = new https.Agent({ ...tls, keepAlive: true, maxSockets: 32 });
  // An operation's wait is a long poll that holds its socket while the operation runs (40 starts, a file transfer):
  // on `agent` 32 of them would leave every other request queued behind them.
  const waitAgent = new https.Agent({ ...tls, keepAlive: true });
  // Exec's websockets (four per stream: every desktop connection opens one) resume the TLS session of an earlier
  // one instead of a full handshake with both certificates each time.
  const wsAgent = new https.Agent({ ...tls, keepAlive: false, maxCachedSessions: 64 });
  const withProject = (p: string) => `${p}${p.includes('?') ? '&' : '?'}project=${encodeURIComponent(c.project)}`;

  function request<T>(method: string, p: string, body?: unknown): Promise<LxdResponse<T>> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = https.request(
        { host: base.hostname, port: base.port || 8443, method, path: withProject(p), agent: isWait(p) ? waitAgent : agent, headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {} },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => {
            let parsed: LxdResponse<T>;
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as LxdResponse<T>;
            } catch {
              return reject(new LxdError(res.statusCode ?? 0, `LXD answered ${res.statusCode} without JSON`));
            }
            if (parsed.type === 'error') return reject(new LxdError(parsed.error_code ?? res.statusCode ?? 0, parsed.error ?? 'LXD error'));
            resolve(parsed);
          });
          res.on('error', reject);
        },
      );
      req.setTimeout(120_000, () => req.destroy(new Error(`LXD ${method} ${p} timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  async function waitFor(op: Operation, waitS: number): Promise<Operation> {
    const done = (await request<Operation>('GET', `/1.0/operations/${op.id}/wait?timeout=${waitS}`)).metadata;
    if (done.status_code >= 400) throw new LxdError(done.status_code, done.err || done.status);
    if (done.status_code < 200) throw new LxdError(504, `LXD operation ${op.id} still ${done.status} after ${waitS} s`);
    return done;
  }

  return {
    project: c.project,
    async get<T>(p: string) {
      return (await request<T>('GET', p)).metadata;
    },
    async send<T>(method: string, p: string, body?: unknown, waitS = 120) {
      const res = await request<unknown>(method, p, body);
      if (res.type === 'async') return (await waitFor(res.metadata as Operation, waitS)) as T;
      return res.metadata as T;
    },
    async begin(method, p, body) {
      return (await request<Operation>(method, p, body)).metadata;
    },
    websocket(operationId, secret) {
      const url = `wss://${base.host}/1.0/operations/${operationId}/websocket?secret=${encodeURIComponent(secret)}&project=${encodeURIComponent(c.project)}`;
      // ws types checkServerIdentity as boolean-returning; Node's TLS (which ws hands it to) takes undefined as "fine".
      return new WebSocket(url, { ...tls, agent: wsAgent, perMessageDeflate: false } as unknown as ClientOptions);
    },
    close() {
      agent.destroy();
      waitAgent.destroy();
      wsAgent.destroy();
    },
  };
}
