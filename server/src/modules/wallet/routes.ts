import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { BalanceAnswer, ErrorBody } from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';
import { fastSerializer } from '../../http/fast-serializer';
import { balanceReader, singleEntries } from './service';
import { courseBalance } from '../courses/entries';

/** GET /v1/user/wallet/balance (spec §7). Each kind of entry comes from one builder; add a builder to add a kind. */
export async function walletRoutes(app: FastifyInstance, ctx: Ctx): Promise<void> {
  const readBalance = balanceReader(ctx.database, [singleEntries(), courseBalance()]);

  app.withTypeProvider<ZodTypeProvider>().get(
    '/user/wallet/balance',
    { preHandler: app.authenticate, schema: { response: { 200: BalanceAnswer, 401: ErrorBody } }, serializerCompiler: fastSerializer },
    async (req) => ({ balance: await readBalance(principalOf(req), ctx.clock.now()) }),
  );
}
