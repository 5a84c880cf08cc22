import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Ctx } from '../../context';
import { NotFound, Unauthorized } from '../../errors';
import { httpSeconds, metricsRegistry, setGaugeSource } from './metrics';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** onResponse hook (registered on the root app): latency by route pattern, so ids in paths never become labels. */
export async function observeHttp(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const route = req.routeOptions.url ?? 'unmatched';
  // Labels stay bounded whatever a client sends: route patterns, known methods, status codes.
  const method = METHODS.has(req.method) ? req.method : 'OTHER';
  httpSeconds.observe({ method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000);
}

/**
 * GET /metrics in the Prometheus text format. Served to scrapers on this host (the socket peer is loopback and no
 * proxy forwarded the request) or to whoever presents `Authorization: Bearer $METRICS_TOKEN`; others get 404 (no
 * token configured) or 401. It carries counts only, no ids. Gauges of machines and orders are read from the database
 * at scrape time, those of the hosts (online, storage pool) from the machine provider.
 */
export async function metricsPage(root: FastifyInstance, ctx: Ctx): Promise<void> {
  const token = ctx.config.METRICS_TOKEN ? Buffer.from(`Bearer ${ctx.config.METRICS_TOKEN}`) : null;
  const db = ctx.db;
  const unset = setGaugeSource({
    machinesByState: async () =>
      (await db.execute(sql`select observed, desired, count(*)::int as n from machines group by observed, desired`)).rows as never,
    ordersByStatus: async () => (await db.execute(sql`select status, count(*)::int as n from orders group by status`)).rows as never,
    hosts: async () => (await ctx.machines.provider.fleet?.()) ?? [],
  });
  root.addHook('onClose', async () => unset());

  root.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    const local = LOOPBACK.has(req.socket.remoteAddress ?? '') && !req.headers['x-forwarded-for'];
    if (!local) {
      const presented = Buffer.from(String(req.headers.authorization ?? ''));
      if (!token) throw new NotFound();
      if (presented.length !== token.length || !timingSafeEqual(presented, token)) {
        reply.header('www-authenticate', 'Bearer realm="metrics"');
        throw new Unauthorized('A valid metrics token is required.', 'metrics/token');
      }
    }
    return reply.type(metricsRegistry.contentType).header('cache-control', 'no-store').send(await metricsRegistry.metrics());
  });
}
