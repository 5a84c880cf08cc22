import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { CaptchaChallenge } from '@hyperdesk/contract';
import type { Ctx } from '../../context';

/** GET /v1/captcha/challenge: a fresh ALTCHA challenge for the widget (public; each solution is usable once). */
export async function captchaRoutes(app: FastifyInstance, ctx: Ctx): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/captcha/challenge',
    {
      schema: { tags: ['captcha'], response: { 200: CaptchaChallenge } },
      config: { rateLimit: { max: 120, timeWindow: 60_000 } },
    },
    async (_req, reply) => {
      reply.header('cache-control', 'no-store');
      return ctx.captcha.challenge();
    },
  );
}
