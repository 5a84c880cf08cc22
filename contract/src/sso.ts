import { z } from 'zod';

/**
 * Single sign-on with a school's OpenID Connect identity provider (issue 23.1). An operator adds providers in the
 * console (/v1/admin/sso/providers); the Login and Sign Up popups list the enabled ones (GET /v1/auth/sso/providers)
 * and open `GET /v1/auth/sso/{id}/start` in the tab, which goes to the provider and comes back to
 * `GET /v1/auth/sso/callback`. The client secret is write-only: no answer ever carries it.
 */

/** What the sign-in popups show: "Continue with <name>". */
export const SsoButton = z.object({ id: z.string(), name: z.string() });
export type SsoButton = z.infer<typeof SsoButton>;
export const SsoButtonList = z.object({ items: z.array(SsoButton) });
export type SsoButtonList = z.infer<typeof SsoButtonList>;

/** An e-mail domain such as `school.edu` (lower-case, no @). */
const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{3,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'Enter domains such as school.edu');

export const SSO_DOMAINS_MAX = 50;

const ProviderFields = {
  /** The school's name as the buttons show it. */
  name: z.string().trim().min(1, 'Enter the name users see on the button.').max(60),
  /** The provider's issuer; its discovery document is at <issuer>/.well-known/openid-configuration. */
  issuer: z.string().trim().url('Enter the issuer URL (https://…).').max(500),
  clientId: z.string().trim().min(1, 'Enter the client id.').max(300),
  /** Users whose verified e-mail is at one of these domains may sign in (exact match). */
  domains: z.array(Domain).min(1, 'Enter at least one e-mail domain.').max(SSO_DOMAINS_MAX),
  enabled: z.boolean(),
};

export const SsoProviderCreate = z.object({ ...ProviderFields, clientSecret: z.string().min(1, 'Enter the client secret.').max(1000) });
export type SsoProviderCreate = z.infer<typeof SsoProviderCreate>;

/** An edit; a missing or empty clientSecret keeps the stored one. */
export const SsoProviderUpdate = z.object({ ...ProviderFields, clientSecret: z.string().max(1000).optional() });
export type SsoProviderUpdate = z.infer<typeof SsoProviderUpdate>;

/** A provider as the console lists it: never its secret. */
export const SsoProvider = z.object({
  id: z.string(),
  name: z.string(),
  issuer: z.string(),
  clientId: z.string(),
  domains: z.array(z.string()),
  enabled: z.boolean(),
  /** Whether a client secret is stored (always true today; the secret itself never leaves the server). */
  hasSecret: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SsoProvider = z.infer<typeof SsoProvider>;

/** The list, and the redirect URI to register at every provider. */
export const SsoProviderList = z.object({ items: z.array(SsoProvider), redirectUri: z.string() });
export type SsoProviderList = z.infer<typeof SsoProviderList>;

export const SsoStartQuery = z.object({ intent: z.enum(['login', 'signup']).default('login') });

/** Why a sign-in through a provider ended without a session; the callback sends the browser to `/?login=1&sso_error=<code>`. */
export const SSO_MESSAGES = {
  'sso/unavailable': 'This sign-in option is not available. Please try again or use your e-mail and password.',
  'sso/expired': 'That sign-in took too long or was already used. Please try again.',
  'sso/failed': 'We could not confirm your sign-in with your school. Please try again.',
  'sso/cancelled': 'The sign-in with your school was cancelled.',
  'sso/email-unverified': 'Your school account has no verified e-mail address, so we cannot sign you in with it.',
  'sso/domain-not-allowed': 'Your e-mail address is not one this school sign-in accepts.',
  'sso/account-disabled': 'Unable to login. Please cross check your login details.',
  'sso/too-many': 'Too many sign-in attempts. Please wait a minute and try again.',
} as const;
export type SsoErrorCode = keyof typeof SSO_MESSAGES;
