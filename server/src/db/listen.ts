import pg from 'pg';

export interface Listener {
  /** Whether the listening connection is up now. */
  connected(): boolean;
  close(): Promise<void>;
}

export interface ListenOptions {
  connectionString: string;
  channel: string;
  onMessage(payload: string): void;
  /** Called after every (re)connection: notifications sent while it was down were lost. */
  onConnect?(reconnected: boolean): void;
  log: { warn(o: object, msg: string): void; info(o: object, msg: string): void };
  /** Longest pause between reconnection attempts. */
  maxBackoffMs?: number;
}

const CHANNEL = /^[a-z_][a-z0-9_]*$/;

/**
 * One dedicated PostgreSQL connection per process doing LISTEN (a pooled connection cannot: LISTEN belongs to the
 * session). Reconnects with a growing pause (0.25 s … maxBackoffMs) when the connection fails or the server
 * restarts; TCP keepalive notices a dead peer. NOTIFY itself goes through the ordinary pool (pg_notify).
 */
export function listen(opts: ListenOptions): Listener {
  if (!CHANNEL.test(opts.channel)) throw new Error(`bad channel name ${opts.channel}`);
  const maxBackoff = opts.maxBackoffMs ?? 5_000;
  let client: pg.Client | null = null;
  let up = false;
  let closed = false;
  let everUp = false;
  let backoff = 250;
  let timer: NodeJS.Timeout | null = null;

  const retry = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, backoff);
    timer.unref();
    backoff = Math.min(maxBackoff, backoff * 2);
  };

  const drop = (c: pg.Client, err?: Error) => {
    if (client !== c) return;
    client = null;
    up = false;
    if (!closed) opts.log.warn({ err: err?.message }, 'event listener connection lost; reconnecting');
    c.removeAllListeners('notification');
    c.end().catch(() => undefined);
    retry();
  };

  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client({ connectionString: opts.connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    client = c;
    c.on('error', (err) => drop(c, err));
    c.on('end', () => drop(c));
    c.on('notification', (n) => {
      if (n.channel === opts.channel && n.payload !== undefined) opts.onMessage(n.payload);
    });
    try {
      await c.connect();
      await c.query(`listen ${opts.channel}`);
    } catch (err) {
      drop(c, err as Error);
      return;
    }
    if (closed || client !== c) return;
    up = true;
    backoff = 250;
    const reconnected = everUp;
    everUp = true;
    if (reconnected) opts.log.info({}, 'event listener reconnected');
    opts.onConnect?.(reconnected);
  }

  void connect();
  return {
    connected: () => up,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      up = false;
      await c?.end().catch(() => undefined);
    },
  };
}
