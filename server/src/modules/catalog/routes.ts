import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ErrorBody, NO_PACKAGES_MESSAGE, PacksAnswer, PacksBody, PacksForLocationQuery } from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { NotFound } from '../../errors';
import { toPack } from './service';

/** POST /v1/packs (spec §7; the body's idtoken is accepted and ignored: the header authenticates) and the
 *  packages-for-location call. */
export async function catalogRoutes(app: FastifyInstance, ctx: Ctx): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/packs',
    {
      preHandler: app.authenticate,
      schema: { body: PacksBody.nullish(), response: { 200: PacksAnswer, 401: ErrorBody } },
    },
    async () => ({ packs: (await ctx.catalog.list()).map(toPack) }),
  );

  r.get(
    '/packs/location',
    {
      preHandler: app.authenticate,
      schema: { querystring: PacksForLocationQuery, response: { 200: PacksAnswer, 404: ErrorBody } },
    },
    async (req) => {
      const rows = await ctx.catalog.forLocation(req.query.region, req.query.platform);
      if (rows.length === 0) throw new NotFound(NO_PACKAGES_MESSAGE, 'packs/unavailable');
      return { packs: rows.map(toPack) };
    },
  );
}
