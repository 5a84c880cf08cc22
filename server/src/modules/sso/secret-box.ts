import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Db } from '../../db/client';
import { getOrCreateSecret } from '../../lib/secrets';

/**
 * Client secrets at rest: AES-256-GCM under a key generated on first use and kept in the `secrets` table (like the
 * captcha and webhook keys), so a copy of `sso_providers` alone (a query result, a log line, a partial dump) never
 * shows a school's secret. Stored as `v1.<iv>.<tag>.<ciphertext>` in base64url.
 */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

export async function createSecretBox(db: Db): Promise<SecretBox> {
  const key = Buffer.from(await getOrCreateSecret(db, 'sso-client-secret-key', 32), 'base64url');
  if (key.length !== 32) throw new Error('sso-client-secret-key must be 32 bytes');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
    },
    open(sealed) {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('unreadable sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
