import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Ctx } from '../../context';
import type { PageResult } from './providers/builtin';
import { CHECKOUT_CSS, checkoutPage, expiredPage, missingPage } from './checkout-page';

const FORM_LIMIT = 4 * 1024;
const field = (body: Record<string, string>, name: string, max: number) => String(body[name] ?? '').slice(0, max);

/**
 * The built-in provider's hosted checkout (outside /v1: it is the provider's page, not the product API).
 * GET shows the page; POST …/pay and …/cancel are plain form posts answered with a 303 redirect or the page again.
 */
export async function checkoutPages(root: FastifyInstance, ctx: Ctx): Promise<void> {
  const builtin = ctx.billing.builtin;

  const answer = (reply: FastifyReply, result: PageResult) => {
    reply.header('cache-control', 'no-store');
    switch (result.kind) {
      case 'redirect':
        return reply.redirect(result.to, 303);
      case 'missing':
        return reply.status(404).type('text/html; charset=utf-8').send(missingPage());
      case 'expired':
        return reply.status(410).type('text/html; charset=utf-8').send(expiredPage(result.session));
      case 'form':
        return reply
          .status(result.error ? 422 : 200)
          .type('text/html; charset=utf-8')
          .send(checkoutPage(result.session, { error: result.error, values: result.values }));
    }
  };

  root.get('/checkout/assets/checkout.css', { schema: { hide: true } }, async (_req, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CHECKOUT_CSS),
  );

  root.get<{ Params: { id: string } }>('/checkout/:id', { schema: { hide: true } }, async (req, reply) => {
    const s = await builtin.session(req.params.id);
    if (!s) return answer(reply, { kind: 'missing' });
    if (s.status === 'paid') return answer(reply, { kind: 'redirect', to: s.successUrl });
    if (s.status === 'expired' || s.expiresAt.getTime() <= ctx.clock.now().getTime()) return answer(reply, { kind: 'expired', session: s });
    return answer(reply, { kind: 'form', session: s });
  });

  await root.register(async (forms) => {
    forms.removeAllContentTypeParsers();
    forms.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );

    forms.post<{ Params: { id: string }; Body: Record<string, string> | undefined }>(
      '/checkout/:id/pay',
      { schema: { hide: true } },
      async (req, reply) => {
        const body = req.body ?? {};
        const card = {
          number: field(body, 'number', 30),
          exp: field(body, 'exp', 10),
          cvc: field(body, 'cvc', 6),
          name: field(body, 'name', 100),
        };
        return answer(reply, await builtin.pay(req.params.id, card));
      },
    );

    forms.post<{ Params: { id: string } }>('/checkout/:id/cancel', { schema: { hide: true } }, async (req, reply) =>
      answer(reply, await builtin.cancel(req.params.id)),
    );
  });
}
