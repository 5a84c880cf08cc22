import { z } from 'zod';
import { Session } from './auth';

/**
 * Two-factor sign-in (issue 23.2): TOTP (RFC 6238, 6 digits, 30 s) with ten single-use recovery codes. A sign-in
 * of an account with a second factor answers a short-lived challenge instead of a session; POST /v1/auth/mfa with
 * the challenge and a code finishes it. The console needs a session signed in with the second factor.
 */
export const TWO_FACTOR_MESSAGES = {
  'auth/mfa-failed': 'That code did not work. Check your authenticator app and try again.',
  'auth/mfa-expired': 'This sign-in has expired. Please log in again.',
  'totp/already-enabled': 'Two-factor sign-in is already on.',
  'totp/not-enabled': 'Two-factor sign-in is not on.',
  'totp/no-enrolment': 'Scan a new QR code first: this enrolment has expired.',
  'totp/code-failed': 'That code did not work. Check your authenticator app and try again.',
  'totp/password-failed': 'Your password is not right.',
  'admin/password-change-required': 'Change the generated password before you open the operator console.',
  'admin/mfa-enrol-required': 'Turn on two-factor sign-in before you open the operator console.',
  'admin/mfa-required': 'Log in again with your authenticator code to open the operator console.',
} as const;
export type TwoFactorCode = keyof typeof TWO_FACTOR_MESSAGES;

/** What a sign-in answers when the account has a second factor: no session yet, a challenge for the code. */
export const MfaChallenge = z.object({
  mfaRequired: z.literal(true),
  /** Single use, for POST /v1/auth/mfa, valid for expiresIn seconds and a few tries. */
  challenge: z.string(),
  expiresIn: z.number(),
});
export type MfaChallenge = z.infer<typeof MfaChallenge>;

/** POST /v1/auth/login: a session, or a challenge when the account has a second factor. */
export const LoginAnswer = z.union([Session, MfaChallenge]);
export type LoginAnswer = z.infer<typeof LoginAnswer>;

/** A 6-digit authenticator code or a recovery code (xxxx-xxxx-xxxx-xxxx; spaces and dashes ignored). */
export const MfaCode = z.string().trim().min(1).max(40);
export const MfaBody = z.object({ challenge: z.string().min(1).max(200), code: MfaCode });

/** The caller's second factor, read from the database. */
export const TwoFactorStatus = z.object({
  enabled: z.boolean(),
  recoveryCodesLeft: z.number().int().nonnegative(),
  /** An admin account needs a second factor for the console. */
  required: z.boolean(),
  /** A generated first-admin password that must be changed first. */
  passwordMustChange: z.boolean(),
});
export type TwoFactorStatus = z.infer<typeof TwoFactorStatus>;

/** An enrolment's secret, shown once: scan the QR code (or type the secret), then confirm with a code. */
export const TotpSetup = z.object({ secret: z.string(), otpauthUrl: z.string(), qrSvg: z.string() });
export type TotpSetup = z.infer<typeof TotpSetup>;

export const TotpConfirmBody = z.object({ code: MfaCode });
/** Enrolment done: the ten recovery codes (shown once) and a session signed in with the new factor. */
export const TotpEnabled = z.object({ recoveryCodes: z.array(z.string()), session: Session });
export type TotpEnabled = z.infer<typeof TotpEnabled>;

/** Turning it off needs the password and a current code (or a recovery code). */
export const TotpDisableBody = z.object({ password: z.string().max(200), code: MfaCode });
