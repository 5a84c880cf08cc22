import { queryOptions } from '@tanstack/react-query';
import { EmailVerification, LoginAnswer, Ok, Session, User, VerifyEmailResult } from '@hyperdesk/contract';
import { request } from './http';

/** Identity calls (issue 2). Every call that signs someone in answers a Session; callers hand it to session.set(). */

export interface SignupInput {
  name: string;
  email: string;
  password: string;
  confirmPassword: string;
  captcha: string;
}

export function signup(input: SignupInput) {
  return request('POST', '/v1/auth/signup', { body: input, schema: Session, anonymous: true });
}

/** A session, or (the account has a second factor) a challenge for the code step (api/twoFactor.ts submitCode). */
export function login(input: { email: string; password: string }) {
  return request('POST', '/v1/auth/login', { body: input, schema: LoginAnswer, anonymous: true });
}

export function logout() {
  return request('POST', '/v1/auth/logout', { anonymous: true });
}

export function forgotPassword(email: string) {
  return request('POST', '/v1/auth/forgot', { body: { email }, schema: Ok, anonymous: true });
}

export function resetPassword(input: { token: string; password: string }) {
  return request('POST', '/v1/auth/reset', { body: input, schema: Ok, anonymous: true });
}

export function changePassword(input: { currentPassword: string; newPassword: string; confirmPassword: string }) {
  return request('POST', '/v1/user/password', { body: input, schema: Session });
}

/** The signed-in user as the server knows it now (keyed by uid so one user's data never shows for another). */
export const meQuery = (uid: string) =>
  queryOptions({
    queryKey: ['user', 'me', uid],
    queryFn: () => request('GET', '/v1/user/me', { schema: User }),
    staleTime: 60_000,
  });

/** Spends a verification link; carries the id token when signed in (the server refuses another account's link). */
export function verifyEmail(token: string) {
  return request('POST', '/v1/auth/verify-email', { body: { token }, schema: VerifyEmailResult });
}

export function resendVerification() {
  return request('POST', '/v1/auth/verify-email/resend', { schema: Ok });
}

export const emailVerificationKey = ['user', 'email-verification'] as const;

/** Whether the caller's address is verified, read from the server (not the id token), and courses waiting for it. */
export const emailVerificationQuery = (uid: string) =>
  queryOptions({
    queryKey: [...emailVerificationKey, uid],
    queryFn: () => request('GET', '/v1/user/email-verification', { schema: EmailVerification }),
    staleTime: 30_000,
  });
