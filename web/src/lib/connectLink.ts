import type { ConnectPayload } from '@hyperdesk/contract';

/** Base64 of the UTF-8 JSON, so names outside Latin-1 survive the trip through the URL fragment. */
export function encodeConnectPayload(p: ConnectPayload): string {
  const bytes = new TextEncoder().encode(JSON.stringify({ url: p.url, role: p.role, packId: p.packId, machineName: p.machineName }));
  let bin = '';
  bytes.forEach((b) => (bin += String.fromCharCode(b)));
  return btoa(bin);
}

/** The connect tab's address (spec §7): `/connect#` + base64(JSON {url, role, packId, machineName}). */
export function connectHref(p: ConnectPayload): string {
  return `/connect#${encodeConnectPayload(p)}`;
}
