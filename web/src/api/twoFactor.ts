import { queryOptions } from '@tanstack/react-query';
import { Ok, Session, TotpEnabled, TotpSetup, TwoFactorStatus } from '@hyperdesk/contract';
import { request } from './http';

/** Two-factor sign-in (issue 23.2): the code step of a sign-in, and the caller's own authenticator. */

export const twoFactorKey = ['user', 'totp'] as const;

export const twoFactorQuery = (uid: string) =>
  queryOptions({
    queryKey: [...twoFactorKey, uid],
    queryFn: () => request('GET', '/v1/user/totp', { schema: TwoFactorStatus }),
    staleTime: 30_000,
  });

/** The code step: the challenge a login (or an SSO callback) answered, and a TOTP or recovery code. */
export function submitCode(challenge: string, code: string) {
  return request('POST', '/v1/auth/mfa', { body: { challenge, code }, schema: Session, anonymous: true });
}

export function startTotpSetup() {
  return request('POST', '/v1/user/totp/setup', { schema: TotpSetup });
}

export function confirmTotp(code: string) {
  return request('POST', '/v1/user/totp/confirm', { body: { code }, schema: TotpEnabled });
}

export function disableTotp(input: { password: string; code: string }) {
  return request('POST', '/v1/user/totp/disable', { body: input, schema: Ok });
}

/** 200 when the console may open; otherwise an ApiError whose code names the missing step (admin/guard.ts). */
export function consoleAccess() {
  return request('GET', '/v1/admin/access', { schema: Ok });
}
