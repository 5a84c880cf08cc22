import { queryOptions } from '@tanstack/react-query';
import { z } from 'zod';
import { SsoButtonList, SsoProvider, SsoProviderList, type SsoProviderCreate, type SsoProviderUpdate } from '@hyperdesk/contract';
import { adminKey } from './admin';
import { request } from './http';

/** Single sign-on (issue 23.1): the sign-in popups' buttons, and the console's identity providers. */

/** The enabled providers, for "Continue with <school>" (public; a minute fresh). */
export const ssoButtonsQuery = () =>
  queryOptions({
    queryKey: ['sso', 'buttons'],
    queryFn: () => request('GET', '/v1/auth/sso/providers', { schema: SsoButtonList, anonymous: true }),
    staleTime: 60_000,
  });

/** Where a button sends the tab: the server redirects to the provider, which comes back to the server. */
export const ssoStartUrl = (id: string, intent: 'login' | 'signup') => `/v1/auth/sso/${encodeURIComponent(id)}/start?intent=${intent}`;

export const ssoProvidersQuery = () =>
  queryOptions({
    queryKey: [...adminKey, 'sso-providers'],
    queryFn: () => request('GET', '/v1/admin/sso/providers', { schema: SsoProviderList }),
  });

export const createSsoProvider = (body: SsoProviderCreate) => request('POST', '/v1/admin/sso/providers', { body, schema: SsoProvider });

export const updateSsoProvider = (id: string, body: SsoProviderUpdate) =>
  request('PUT', `/v1/admin/sso/providers/${encodeURIComponent(id)}`, { body, schema: SsoProvider });

export const deleteSsoProvider = (id: string) => request('DELETE', `/v1/admin/sso/providers/${encodeURIComponent(id)}`, { schema: z.undefined() });
