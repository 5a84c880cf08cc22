import { totpCode } from '../src/modules/identity/totp';
import { sessionCookie } from './identity-helpers';

/**
 * Operators in tests (issue 23.2): the console needs a sign-in with a second factor, so every admin a test makes
 * enrols an authenticator through the API and signs in with its code. The one place for it: createUser(s,
 * { admin: true }) and the CLI-made first admin in admin-cli.test both come through here.
 */

type Call = (method: string, path: string, opts?: { body?: unknown; token?: string; headers?: Record<string, string> }) => Promise<{ status: number; body: any; headers: Headers }>;

export interface Enrolled {
  /** An id token signed in with the second factor (amr pwd otp), and its refresh cookie. */
  token: string;
  cookie: string;
  /** The authenticator's secret (base32): totpCode(secret, at) is what the app would show. */
  secret: string;
  recoveryCodes: string[];
}

/** Enrols TOTP for the signed-in caller of `token` (setup, then confirm with the current code). */
export async function enrolTotp(call: Call, token: string, now: Date = new Date()): Promise<Enrolled> {
  const setup = await call('POST', '/v1/user/totp/setup', { token });
  if (setup.status !== 200) throw new Error(`totp setup answered ${setup.status}: ${JSON.stringify(setup.body)}`);
  const secret = setup.body.secret as string;
  const confirmed = await call('POST', '/v1/user/totp/confirm', { token, body: { code: totpCode(secret, now) } });
  if (confirmed.status !== 200) throw new Error(`totp confirm answered ${confirmed.status}: ${JSON.stringify(confirmed.body)}`);
  return { token: confirmed.body.session.accessToken, cookie: sessionCookie(confirmed.headers)!, secret, recoveryCodes: confirmed.body.recoveryCodes };
}

/** Password login, then (the account has a second factor) the code step with `code`. Throws unless both pass. */
export async function loginWithCode(call: Call, email: string, password: string, code: string, headers: Record<string, string> = {}) {
  const first = await call('POST', '/v1/auth/login', { body: { email, password }, headers });
  if (first.status !== 200 || !first.body.mfaRequired) throw new Error(`login answered ${first.status}: ${JSON.stringify(first.body)}`);
  const second = await call('POST', '/v1/auth/mfa', { body: { challenge: first.body.challenge, code }, headers });
  if (second.status !== 200) throw new Error(`mfa answered ${second.status}: ${JSON.stringify(second.body)}`);
  return { token: second.body.accessToken as string, cookie: sessionCookie(second.headers)!, body: second.body };
}

/**
 * The first admin as `npm run admin -- create-admin` leaves them (a generated password that must change): logs in,
 * changes the password, enrols TOTP. Answers a console-ready token.
 */
export async function firstAdminSignIn(call: Call, email: string, generated: string, o: { newPassword?: string; now?: Date } = {}) {
  const newPassword = o.newPassword ?? 'operator-2026!';
  const login = await call('POST', '/v1/auth/login', { body: { email, password: generated } });
  if (login.status !== 200 || !login.body.accessToken) throw new Error(`login answered ${login.status}: ${JSON.stringify(login.body)}`);
  const changed = await call('POST', '/v1/user/password', { token: login.body.accessToken, body: { currentPassword: generated, newPassword, confirmPassword: newPassword } });
  if (changed.status !== 200) throw new Error(`password change answered ${changed.status}: ${JSON.stringify(changed.body)}`);
  return { password: newPassword, ...(await enrolTotp(call, changed.body.accessToken, o.now)) };
}
