import Fastify from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import { randomUUID } from 'node:crypto';
import type { Config } from './config';
import type { Ctx } from './context';
import { HttpError } from './errors';
import { registerAuthentication } from './http/auth';
import { createContext, type AppDeps } from './services';
import { registerModules, registerPages } from './modules/index';
import { observeHttp } from './modules/metrics/routes';
import { openApiOptions } from './openapi';
import { serveWeb } from './web';
import { logSerializers } from './lib/redact';
import { stdoutLogStream } from './lib/log-stream';
import { counterStore } from './lib/rate-limit-store';
import { registerSecurityHeaders } from './http/security-headers';
import { inlineScriptSources } from './http/inline-scripts';
import { WEB_DIST } from './lib/paths';

declare module 'fastify' {
  interface FastifyInstance {
    ctx: Ctx;
  }
}

export const BODY_LIMIT = 64 * 1024;

export async function buildApp(deps: AppDeps) {
  const app = Fastify({
    logger: loggerOptions(deps),
    bodyLimit: BODY_LIMIT,
    trustProxy: trustProxyOption(deps.config.TRUST_PROXY),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  app.setErrorHandler((err: any, req, reply) => {
    const reqId = String(req.id);
    if (hasZodFastifySchemaValidationErrors(err)) {
      const first = err.validation[0];
      const where = first?.instancePath ? first.instancePath.replace(/^\//, '').replace(/\//g, '.') : err.validationContext;
      return reply.status(400).send({
        statusCode: 400,
        error: 'Bad Request',
        message: `Invalid ${where ?? 'request'}: ${first?.message ?? 'bad input'}`,
        code: 'bad-request',
        reqId,
      });
    }
    if (err instanceof HttpError) {
      return reply.status(err.statusCode).send({
        statusCode: err.statusCode,
        error: httpName(err.statusCode),
        message: err.message,
        code: err.code,
        reqId,
      });
    }
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status >= 500) req.log.error({ err }, 'request failed');
    return reply.status(status).send({
      statusCode: status,
      error: httpName(status),
      message: status >= 500 ? 'Something went wrong on our side. Please try again.' : clientMessage(err),
      code: status === 429 ? 'rate-limited' : undefined,
      reqId,
    });
  });

  registerSecurityHeaders(app, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'", "'wasm-unsafe-eval'", ...inlineScriptSources(WEB_DIST)],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:', 'blob:'],
        connectSrc: ["'self'", 'ws:', 'wss:'],
        workerSrc: ["'self'", 'blob:'],
        frameAncestors: ["'none'"],
        formAction: ["'self'", 'https://checkout.stripe.com'],
      },
    },
    crossOriginEmbedderPolicy: false,
  });
  await app.register(cookie);
  const ctx = await createContext(deps, app.log);
  app.decorate('ctx', ctx);
  // The push bus's listening connection and the counters' Redis connection end with the app.
  app.addHook('onClose', async () => {
    await ctx.events.close();
    await ctx.counters.close();
  });
  await app.register(rateLimit, {
    global: false,
    // Route limits count where every limit counts (ctx.counters): shared by all replicas on PostgreSQL or Redis.
    store: counterStore(ctx.counters, ctx.clock) as never,
    // A counter store that cannot answer (database or Redis down) lets the request through rather than failing it.
    skipOnError: true,
    errorResponseBuilder: (_req, ctx) => {
      const err = new HttpError(429, `Too many requests, please try again in ${Math.ceil(ctx.ttl / 1000)} seconds.`, 'rate-limited');
      return err;
    },
  });
  await app.register(swagger, openApiOptions(deps.config, () => app.authenticate));

  app.addHook('onResponse', observeHttp);

  registerAuthentication(app, (token) => ctx.tokens.verify(token));

  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    try {
      await deps.database.exec('select 1');
      return { ok: true };
    } catch {
      return reply.status(503).send({ ok: false });
    }
  });
  app.get('/.well-known/jwks.json', { schema: { hide: true } }, async () => ctx.tokens.jwks());

  await app.register(async (v1) => registerModules(v1 as never, ctx), { prefix: '/v1' });
  await app.register(async (root) => registerPages(root as never, ctx));
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await serveWeb(app as never);
  return app;
}

/** pino options with the redacting request serializer (./lib/redact) and a non-blocking stream, unless the caller passed one. */
function loggerOptions(deps: AppDeps): false | Record<string, unknown> {
  if (deps.logger === false) return false;
  const base = deps.logger === undefined || deps.logger === true ? { level: deps.config.LOG_LEVEL } : deps.logger;
  const serializers = (base.serializers ?? {}) as Record<string, unknown>;
  // Never pino's default synchronous stdout: a reader that stops reading must not stall the server (./lib/log-stream).
  const stream = base.stream ?? stdoutLogStream();
  return { ...base, stream, serializers: { ...serializers, ...logSerializers } };
}

/**
 * Fastify ignores a bare hop count (it cannot check the nearest peer), so N hops become a function trusting the
 * socket peer and the N-1 entries after it: the client is the Nth address from the right of X-Forwarded-For.
 */
function trustProxyOption(t: Config['TRUST_PROXY']): false | string[] | ((addr: string, hop: number) => boolean) {
  if (typeof t === 'number') return (_addr, hop) => hop < t;
  return t;
}

function clientMessage(err: { code?: string; message?: string }): string {
  if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return 'The request body is not valid JSON.';
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'The request body is too large.';
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'Unsupported content type.';
  return err.message && err.message.length < 200 ? err.message : 'Bad request.';
}

function httpName(status: number): string {
  const names: Record<number, string> = {
    400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict',
    413: 'Payload Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests', 503: 'Service Unavailable',
  };
  return names[status] ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request');
}
