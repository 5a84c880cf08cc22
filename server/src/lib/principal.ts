/**
 * What a verified id token tells the server about its caller. A low file (imports nothing) so the request-auth
 * helpers (../http/auth.ts) and every module can name it without importing the identity module.
 */
export interface Principal {
  uid: string;
  email: string;
  name: string;
  instructor: boolean;
  admin: boolean;
  /** The `email_verified` claim: the address was proven by a mailed link (roster access needs it). */
  emailVerified: boolean;
  /**
   * How this sign-in was made (the `amr` claim, RFC 8176 values): 'pwd' a password, 'sso' the school's identity
   * provider, 'otp' a TOTP or recovery code on top. Absent on tokens signed before two-factor sign-in existed.
   */
  amr?: readonly string[];
  /** The `mfa` claim: a second factor was used in this sign-in (amr has 'otp'). The console requires it. */
  mfa?: boolean;
  /** The `iat` claim, in seconds: when the id token was signed. */
  issuedAt?: number;
}
