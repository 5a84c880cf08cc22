import { createHmac } from 'node:crypto';
import type { IceServer } from '@hyperdesk/contract';

/** How long minted TURN credentials stay valid: a stream that outlives them keeps its allocation (refreshes are allowed). */
export const TURN_TTL_SECONDS = 6 * 60 * 60;

export interface TurnConfig {
  urls: string[];
  secret?: string;
}

/**
 * coturn's REST scheme (`use-auth-secret`): username `<expiry unix seconds>:<userId>`, credential
 * base64(HMAC-SHA1(secret, username)). The relay checks both without a call to us, and refuses after the expiry.
 */
export function turnCredentials(secret: string, userId: string, nowMs: number, ttlSeconds = TURN_TTL_SECONDS) {
  const username = `${Math.floor(nowMs / 1000) + ttlSeconds}:${userId}`;
  const credential = createHmac('sha1', secret).update(username).digest('base64');
  return { username, credential };
}

/** The ICE servers of one session: STUN as given, TURN with fresh credentials; none means host candidates only. */
export function iceServersFor(cfg: TurnConfig, userId: string, nowMs: number): IceServer[] {
  const stun = cfg.urls.filter((u) => u.startsWith('stun:'));
  const turn = cfg.urls.filter((u) => u.startsWith('turn'));
  const out: IceServer[] = [];
  if (stun.length) out.push({ urls: stun });
  if (turn.length && cfg.secret) out.push({ urls: turn, ...turnCredentials(cfg.secret, userId, nowMs) });
  return out;
}
