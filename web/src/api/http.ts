import type { z } from 'zod';
import { session } from '../auth/session';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

interface RequestOptions<S extends z.ZodType | undefined> {
  body?: unknown;
  form?: FormData;
  /** Parse the answer with the contract's schema (house rule 2). */
  schema?: S;
  /** Calls that must not carry the id token (sign-in itself). */
  anonymous?: boolean;
  /** Ends a streamed answer (openStream). */
  signal?: AbortSignal;
}

/**
 * The one place the web app calls fetch (house rule 8): adds the `idtoken` header, refreshes an expired id token
 * once, and turns error bodies into ApiError.
 */
export async function request<S extends z.ZodType | undefined = undefined>(
  method: string,
  path: string,
  opts: RequestOptions<S> = {},
): Promise<S extends z.ZodType ? z.infer<S> : unknown> {
  const res = await call(method, path, opts);
  const text = await res.text();
  let data: unknown = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    /* non-JSON answer */
  }
  if (!res.ok) {
    const err = (data ?? {}) as { message?: string; code?: string };
    throw new ApiError(res.status, err.message ?? `Request failed (${res.status})`, err.code);
  }
  return (opts.schema ? opts.schema.parse(data) : data) as never;
}

/** A file the server makes for the signed-in user (a CSV export): its bytes and the name it suggests. */
export async function download(path: string): Promise<{ blob: Blob; filename: string }> {
  const res = await call('GET', path, {});
  if (!res.ok) {
    const err = ((await res.json().catch(() => undefined)) ?? {}) as { message?: string; code?: string };
    throw new ApiError(res.status, err.message ?? `Request failed (${res.status})`, err.code);
  }
  const filename = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'download';
  return { blob: await res.blob(), filename };
}

/** A streamed answer (the instructor wall's picture stream): its body, read until `signal` aborts it. */
export async function openStream(path: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
  const res = await call('GET', path, { signal });
  if (!res.ok || !res.body) {
    const err = ((await res.json().catch(() => undefined)) ?? {}) as { message?: string; code?: string };
    throw new ApiError(res.status, err.message ?? `Request failed (${res.status})`, err.code);
  }
  return res.body;
}

async function call(method: string, path: string, opts: RequestOptions<z.ZodType | undefined>): Promise<Response> {
  const send = async () => {
    const headers: Record<string, string> = {};
    if (!opts.anonymous) {
      const token = await session.token();
      if (token) headers.idtoken = token;
    }
    let body: BodyInit | undefined;
    if (opts.form) body = opts.form;
    else if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    return fetch(path, { method, headers, body, credentials: 'same-origin', signal: opts.signal });
  };
  let res = await send();
  if (res.status === 401 && !opts.anonymous && (await session.refresh())) res = await send();
  return res;
}
