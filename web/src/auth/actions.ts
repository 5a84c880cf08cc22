import * as api from '../api/auth';
import { session } from './session';

/** Sign-in and sign-out as the UI performs them: the API call, then the in-memory session follows. */

export async function signIn(email: string, password: string) {
  const s = await api.login({ email, password });
  session.set(s);
  return s.user;
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
