import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ErrorBody, HoursNoticesAnswer } from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';
import { hoursNotices } from './notices';

/** GET /v1/user/hours/notices (issue 22.4): the forecast and active alert per machine or course the user controls.
 *  Apart from the balance so the benchmarked balance read stays one light statement. */
export async function hoursRoutes(app: FastifyInstance, ctx: Ctx): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/user/hours/notices',
    { preHandler: app.authenticate, schema: { response: { 200: HoursNoticesAnswer, 401: ErrorBody } } },
    async (req) => ({ notices: await hoursNotices(ctx.db, principalOf(req).uid, ctx.clock.now()) }),
  );
}
