import { session } from '../auth/session';

export interface ServerEvent {
  type: string;
  data: string;
}

const MIN_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Follows GET /v1/user/events (server-sent events authenticated by the idtoken header, so EventSource cannot be
 * used): reads the stream with fetch, calls `onEvent` per event and `onOpen` on every (re)connection, and reconnects
 * with exponential backoff until the returned function is called.
 */
export function subscribeEvents(onEvent: (e: ServerEvent) => void, onOpen?: () => void): () => void {
  const abort = new AbortController();
  let backoff = MIN_BACKOFF_MS;

  const run = async () => {
    while (!abort.signal.aborted) {
      try {
        const token = await session.token();
        if (!token) throw new Error('signed out');
        const res = await fetch('/v1/user/events', {
          headers: { idtoken: token, accept: 'text/event-stream' },
          credentials: 'same-origin',
          signal: abort.signal,
          cache: 'no-store',
        });
        if (res.status === 401) await session.refresh();
        if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
        backoff = MIN_BACKOFF_MS;
        onOpen?.();
        await readStream(res.body, onEvent, abort.signal);
      } catch {
        if (abort.signal.aborted) return;
      }
      await sleep(backoff + Math.random() * 250, abort.signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  };
  void run();
  return () => abort.abort();
}

/** Parses the text/event-stream framing: fields per line, an empty line ends an event. */
async function readStream(body: ReadableStream<Uint8Array>, onEvent: (e: ServerEvent) => void, signal: AbortSignal) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true });
  let buffer = '';
  let type = '';
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(buffer[nl] === '\r' ? nl + 2 : nl + 1);
      if (line === '') {
        if (type || data.length) onEvent({ type: type || 'message', data: data.join('\n') });
        type = '';
        data = [];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') type = val;
        else if (field === 'data') data.push(val);
      }
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}
