import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody, IdParam, SsoProvider, SsoProviderCreate, SsoProviderList, SsoProviderUpdate } from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';
import { CALLBACK_PATH } from './flow';
import { createProviderAdmin } from './providers';
import { createSecretBox } from './secret-box';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

/**
 * /v1/admin/sso/providers: the console's identity providers. Registered inside the admin scope (admin/routes.ts),
 * so the operator guard there runs first. Answers never carry a client secret.
 */
export async function ssoAdminRoutes(scope: FastifyInstance, ctx: Ctx): Promise<void> {
  const r = scope.withTypeProvider<ZodTypeProvider>();
  const providers = createProviderAdmin({ db: ctx.db, clock: ctx.clock, box: await createSecretBox(ctx.db) });
  const tags = ['admin'];
  const redirectUri = `${ctx.config.publicUrl}${CALLBACK_PATH}`;

  r.get('/sso/providers', { schema: { tags, summary: 'Identity providers (OpenID Connect) and the redirect URI to register', response: { 200: SsoProviderList, ...errors } } }, async (_req, reply) => {
    reply.header('cache-control', 'no-store');
    return { items: await providers.list(), redirectUri };
  });
  r.post('/sso/providers', { schema: { tags, summary: 'Add an identity provider (audited)', body: SsoProviderCreate, response: { 201: SsoProvider, ...errors } } }, async (req, reply) =>
    reply.status(201).send(await providers.create(principalOf(req), req.body)),
  );
  r.put('/sso/providers/:id', { schema: { tags, summary: 'Edit, enable or disable an identity provider (audited)', params: IdParam, body: SsoProviderUpdate, response: { 200: SsoProvider, ...errors } } }, async (req) =>
    providers.update(principalOf(req), req.params.id, req.body),
  );
  r.delete('/sso/providers/:id', { schema: { tags, summary: 'Delete an identity provider (audited)', params: IdParam, response: { 204: z.null(), ...errors } } }, async (req, reply) => {
    await providers.remove(principalOf(req), req.params.id);
    return reply.status(204).send(null);
  });
}
