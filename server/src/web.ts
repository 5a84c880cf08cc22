import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ASSETS_DIR, WEB_DIST } from './lib/paths';

/**
 * Serves the built SPA (when web/dist exists); unknown non-API GETs get index.html so client routes work on reload.
 * /favicon.ico is the server's own (web/public/favicon.svg drawn at 16, 32 and 48 px), built or not: the pages the
 * server renders itself (the built-in checkout) link it, and browsers ask for it wherever a page names no icon.
 */
export async function serveWeb(app: FastifyInstance): Promise<void> {
  const favicon = readFileSync(path.join(ASSETS_DIR, 'favicon.ico'));
  app.get('/favicon.ico', { schema: { hide: true } }, async (_req, reply) =>
    reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(favicon),
  );
  const built = existsSync(path.join(WEB_DIST, 'index.html'));
  if (built) await app.register(fastifyStatic, {
    root: WEB_DIST,
    wildcard: false,
    preCompressed: true,
    setHeaders: (res, file) => {
      if (file.includes(`${path.sep}assets${path.sep}`)) res.header('cache-control', 'public, max-age=31536000, immutable');
      else res.header('cache-control', 'no-cache');
    },
  });
  app.setNotFoundHandler((req, reply) => {
    const isApi = req.url.startsWith('/v1') || req.url.startsWith('/.well-known');
    if (built && req.method === 'GET' && !isApi && !path.extname(req.url.split('?')[0] ?? '')) {
      return reply.type('text/html').header('cache-control', 'no-cache').sendFile('index.html');
    }
    return reply.status(404).send({ statusCode: 404, error: 'Not Found', message: 'Not found.', reqId: String(req.id) });
  });
}
