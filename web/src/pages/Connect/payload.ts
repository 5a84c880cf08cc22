import { ConnectPayload } from '@hyperdesk/contract';

/**
 * Reads the connect tab's fragment: base64 of the UTF-8 JSON {url, role, packId, machineName} (spec §7). Anything
 * else (empty, not base64, not JSON, missing fields, a url that is not a connect link) answers null.
 */
export function decodeConnectPayload(hash: string): ConnectPayload | null {
  let raw = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!raw || raw.length > 8000) return null;
  try {
    raw = decodeURIComponent(raw);
    const bin = atob(raw.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    const parsed = ConnectPayload.safeParse(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)));
    if (!parsed.success || !parsed.data.url.startsWith('/v1/slot/connect')) return null;
    return parsed.data;
  } catch {
    return null;
  }
}
