import { lt, or } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { captchaUsed, emailVerifications, passwordResets, sessions, signInChallenges } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../lib/jobs';

const DAY = 24 * 60 * 60_000;

/** Deletes what can no longer be used: spent captcha signatures past their expiry, old reset and verification links, sessions. */
export function identityCleanupJob(db: Db, clock: Clock): Job {
  return {
    name: 'identity-cleanup',
    intervalMs: 60 * 60_000,
    async runOnce() {
      const now = clock.now();
      const weekAgo = new Date(now.getTime() - 7 * DAY);
      await db.delete(captchaUsed).where(lt(captchaUsed.expiresAt, now));
      await db.delete(passwordResets).where(lt(passwordResets.expiresAt, new Date(now.getTime() - DAY)));
      await db.delete(emailVerifications).where(lt(emailVerifications.expiresAt, new Date(now.getTime() - DAY)));
      await db.delete(sessions).where(or(lt(sessions.expiresAt, weekAgo), lt(sessions.revokedAt, weekAgo)));
      // Kept a day: their attempts count towards the per-account limit on codes (sign-in.ts).
      await db.delete(signInChallenges).where(lt(signInChallenges.expiresAt, new Date(now.getTime() - DAY)));
    },
  };
}
