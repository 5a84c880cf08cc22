import { queryOptions } from '@tanstack/react-query';
import { Ok, Session, User } from '@hyperdesk/contract';
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

export function login(input: { email: string; password: string }) {
  return request('POST', '/v1/auth/login', { body: input, schema: Session, anonymous: true });
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
