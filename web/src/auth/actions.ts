import type { Session, User } from '@hyperdesk/contract';
import * as api from '../api/auth';
import { submitCode } from '../api/twoFactor';
import { session } from './session';

/** Sign-in and sign-out as the UI performs them: the API call, then the in-memory session follows. */

/** Signs in, or answers the challenge of the code step when the account has a second factor. */
export async function signIn(email: string, password: string): Promise<{ challenge: string } | { user: User }> {
  const answer = await api.login({ email, password });
  if ('mfaRequired' in answer) return { challenge: answer.challenge };
  session.set(answer);
  return { user: answer.user };
}

/** The code step: a TOTP or recovery code for the challenge. */
export async function signInWithCode(challenge: string, code: string) {
  const s = await submitCode(challenge, code);
  session.set(s);
  return s.user;
}

/** Two-factor sign-in turned on: the server ended the other sessions and answers this tab's new one. */
export function adoptSession(s: Session) {
  session.set(s);
}

export async function signUp(input: api.SignupInput) {
  const s = await api.signup(input);
  session.set(s);
  return s.user;
}

export async function changePassword(input: { currentPassword: string; newPassword: string; confirmPassword: string }) {
  // The server revokes the other sessions and answers a fresh one for this tab.
  session.set(await api.changePassword(input));
}

/** Logs out on the server (revokes the refresh session); the tab is signed out even if that call fails. */
export async function signOut() {
  try {
    await api.logout();
  } catch {
    // Offline or already expired: nothing more to revoke from here, and the user asked to leave.
  }
  session.clear();
}
