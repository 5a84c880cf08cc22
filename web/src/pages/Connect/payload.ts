import { ConnectPayload } from '@hyperdesk/contract';
import { fragmentJson } from '../../early/dial';

/**
 * Reads the connect tab's fragment: base64 of the UTF-8 JSON {url, role, packId, machineName} (spec §7). Anything
 * else (empty, not base64, not JSON, missing fields, a url that is not a connect link) answers null.
 */
export function decodeConnectPayload(hash: string): ConnectPayload | null {
  const parsed = ConnectPayload.safeParse(fragmentJson(hash));
  return parsed.success && parsed.data.url.startsWith('/v1/slot/connect') ? parsed.data : null;
}
