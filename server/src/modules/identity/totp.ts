import { createCipheriv, createDecipheriv, createHash, randomBytes, randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import type { Db } from '../../db/client';
import { getOrCreateSecret } from '../../lib/secrets';

/**
 * TOTP (RFC 6238) with otpauth: SHA-1, 6 digits, 30 s steps, what every authenticator app reads from an otpauth://
 * QR code. One step either side is accepted (a phone's clock a little off); the caller refuses a step it already
 * accepted (replay). Secrets are kept AES-256-GCM encrypted with a key the server generates on first use (the
 * `secrets` table, never in the repository), bound to their user id (a row copied to another user fails to open).
 */
export const TOTP_PERIOD = 30;
const DIGITS = 6;
const WINDOW = 1;
const ISSUER = 'Hyperdesk';
const KEY_NAME = 'totp-encryption-key';

export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

const totpOf = (secret: string, label = '') => new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: DIGITS, period: TOTP_PERIOD, secret: Secret.fromBase32(secret) });

export const otpauthUrl = (secret: string, email: string): string => totpOf(secret, email).toString();

/** The QR code of the otpauth:// URL as an SVG document (rendered by the server: the web needs no QR library). */
export const qrSvg = (url: string): Promise<string> => QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });

/** The code for a moment (tests and the helpers that act as an authenticator app). */
export const totpCode = (secret: string, at: Date): string => totpOf(secret).generate({ timestamp: at.getTime() });

/** The time step a 6-digit code belongs to (now, or one step either side), or null when it matches none. */
export function matchStep(secret: string, code: string, now: Date): number | null {
  const token = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totpOf(secret).validate({ token, timestamp: now.getTime(), window: WINDOW });
  return delta === null ? null : TOTP.counter({ period: TOTP_PERIOD, timestamp: now.getTime() }) + delta;
}

const keys = new WeakMap<Db, Promise<Buffer>>();
/** The server's TOTP encryption key: generated once per deployment, shared by every replica through the database. */
function keyOf(db: Db): Promise<Buffer> {
  let key = keys.get(db);
  if (!key) {
    key = getOrCreateSecret(db, KEY_NAME, 32).then((v) => Buffer.from(v, 'base64url'));
    key.catch(() => keys.delete(db));
    keys.set(db, key);
  }
  return key;
}

/** `v1.<iv>.<tag>.<ciphertext>` (base64url), the user id as additional data. */
export async function sealSecret(db: Db, userId: string, secret: string): Promise<string> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await keyOf(db), iv);
  cipher.setAAD(Buffer.from(userId));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

export async function openSecret(db: Db, userId: string, sealed: string): Promise<string> {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || !body) throw new Error('unknown TOTP secret format');
  const decipher = createDecipheriv('aes-256-gcm', await keyOf(db), Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(userId));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

/** No 0/o, 1/l/i: read off a screen or paper without doubt. 16 characters of 31 ≈ 79 random bits. */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
export const RECOVERY_CODE_COUNT = 10;

/** Ten fresh codes, formatted xxxx-xxxx-xxxx-xxxx. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: 16 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('');
    return chars.match(/.{4}/g)!.join('-');
  });
}

/** The stored form of a recovery code: SHA-256 of its characters (case, spaces and dashes ignored). */
export const hashRecoveryCode = (code: string): string => createHash('sha256').update(code.toLowerCase().replace(/[\s-]/g, '')).digest('hex');

/** A recovery code as typed: 16 characters of the alphabet once spaces and dashes are gone. */
export const looksLikeRecoveryCode = (code: string): boolean => /^[a-z0-9]{16}$/.test(code.toLowerCase().replace(/[\s-]/g, ''));
