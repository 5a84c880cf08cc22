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
}
