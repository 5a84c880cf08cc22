import { createChallenge, extractParams, verifySolution } from 'altcha-lib/v1';
import type { Payload } from 'altcha-lib/v1/types';
import type { Db } from '../../db/client';
import { captchaUsed } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { getOrCreateSecret } from '../../lib/secrets';

export interface CaptchaChallenge {
  algorithm: string;
  challenge: string;
  maxnumber?: number;
  salt: string;
  signature: string;
}

export interface Captcha {
  challenge(): Promise<CaptchaChallenge>;
  /** Verifies an ALTCHA payload (base64 JSON from the widget); each solution is accepted once; false when missing/bad/reused. */
  verify(payload: string | undefined | null): Promise<boolean>;
}

/** ALTCHA proof of work (v1 challenges, which the altcha widget solves): 25k SHA-256 on average, well under a second in a browser. */
export const CHALLENGE_MAX_NUMBER = 50_000;
export const CHALLENGE_TTL_MS = 10 * 60_000;
const ALGORITHM = 'SHA-256';

function decode(payload: string): Payload | null {
  try {
    const p = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as Partial<Payload>;
    const ok =
      p.algorithm === ALGORITHM &&
      typeof p.challenge === 'string' &&
      typeof p.salt === 'string' &&
      typeof p.signature === 'string' &&
      /^[0-9a-f]{64}$/.test(p.signature) &&
      Number.isSafeInteger(p.number) &&
      (p.number as number) >= 0;
    return ok ? (p as Payload) : null;
  } catch {
    return null;
  }
}

export async function createAltchaCaptcha(db: Db, clock: Clock): Promise<Captcha> {
  const hmacKey = await getOrCreateSecret(db, 'altcha-hmac-key');
  return {
    async challenge() {
      const c = await createChallenge({
        algorithm: ALGORITHM,
        hmacKey,
        maxnumber: CHALLENGE_MAX_NUMBER,
        expires: new Date(clock.now().getTime() + CHALLENGE_TTL_MS),
      });
      return { algorithm: c.algorithm, challenge: c.challenge, maxnumber: c.maxnumber, salt: c.salt, signature: c.signature };
    },
    async verify(raw) {
      if (typeof raw !== 'string' || raw.length === 0 || raw.length > 4096) return false;
      const payload = decode(raw);
      if (!payload) return false;
      // Expiry against the injected clock (altcha-lib would read the wall clock); challenges without one are refused.
      const expires = Number(extractParams(payload).expires);
      if (!Number.isFinite(expires) || expires * 1000 <= clock.now().getTime()) return false;
      if (!(await verifySolution(payload, hmacKey, false).catch(() => false))) return false;
      // Single use: the signature identifies the challenge; the first insert wins, a reuse inserts nothing.
      const inserted = await db
        .insert(captchaUsed)
        .values({ signature: payload.signature, expiresAt: new Date(expires * 1000) })
        .onConflictDoNothing()
        .returning({ signature: captchaUsed.signature });
      return inserted.length === 1;
    },
  };
}
