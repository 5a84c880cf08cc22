import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { Config } from './config';

/**
 * How `/v1/openapi.json` is made complete for real tools (issue 15), in one place rather than in every routes.ts:
 * - every operation gets an operationId (derived from method and path unless the route names one) and a summary;
 * - operations behind `authenticate` get the `idtoken` apiKey security scheme, all others an explicit `security: []`;
 * - every operation documents the one error shape (errors.ts / app.ts: `{ statusCode, error, message, code?, reqId }`)
 *   on the 4xx answers it can give: 400 for input it validates, 401 when signed in, 429 when rate limited — besides
 *   the 4xx the route declares itself;
 * - `servers` names the server's public URL.
 * A route may still set `summary`/`operationId` in its own schema; those win.
 */

/** Summaries of routes that do not carry their own (keyed `METHOD path`, path as in the document). */
const SUMMARIES: Record<string, string> = {
  'POST /v1/auth/signup': 'Create an account and sign in',
  'POST /v1/auth/verify-email': 'Verify the e-mail address with a mailed link token',
  'POST /v1/auth/verify-email/resend': 'Send the e-mail verification link again',
  'GET /v1/user/email-verification': "The signed-in user's e-mail verification state",
  'POST /v1/auth/login': 'Sign in with e-mail and password',
  'POST /v1/auth/refresh': 'Trade the refresh cookie for a fresh id token',
  'POST /v1/auth/logout': 'Sign out (revoke the refresh session)',
  'POST /v1/auth/forgot': 'Send a password reset link',
  'POST /v1/auth/reset': 'Set a new password with a reset link token',
  'POST /v1/user/password': 'Change the password',
  'GET /v1/user/me': 'The signed-in user',
  'PATCH /v1/user/profile': 'Change the display name',
  'GET /v1/captcha/challenge': 'A proof-of-work captcha challenge',
  'POST /v1/packs': 'Runtime packs for a country and platform',
  'GET /v1/packs/location': 'Packages available at a location',
  'POST /v1/user/wallet/recharge': 'Check out a runtime pack',
  'POST /v1/user/order/status': 'Status of an order (converged from the payment provider)',
  'GET /v1/user/wallet/balance': "The signed-in user's machines, courses and hours",
};

/** 4xx answers a route gives from its own code (identity's limiters and refusals) that its schema does not declare. */
const EXTRA_ERRORS: Record<string, Record<string, string>> = {
  'POST /v1/auth/signup': { '409': 'The e-mail already has an account', '429': '' },
  'POST /v1/auth/verify-email': { '429': '' },
  'POST /v1/auth/verify-email/resend': { '429': '' },
  'POST /v1/auth/login': { '401': 'Wrong e-mail or password', '429': '' },
  'POST /v1/auth/refresh': { '401': 'The refresh session is missing, expired or revoked' },
  'POST /v1/auth/forgot': { '429': '' },
  'POST /v1/auth/reset': { '429': '' },
  'POST /v1/user/password': { '429': '' },
};

export const ERROR_SCHEMA = {
  type: 'object',
  description: 'Every error answer: the HTTP status and its name, a message for people, a stable code, the request id.',
  properties: {
    statusCode: { type: 'integer', minimum: 400, maximum: 599 },
    error: { type: 'string', example: 'Bad Request' },
    message: { type: 'string' },
    code: { type: 'string', description: 'Stable machine-readable reason, e.g. `bad-request`, `auth/no-token`' },
    reqId: { type: 'string', description: 'Quote it when asking for help' },
  },
  required: ['statusCode', 'error', 'message', 'reqId'],
} as const;

const STANDARD_ERRORS = {
  '400': 'The input is invalid (the message names the field)',
  '401': 'Missing, expired or invalid `idtoken` header',
  '429': 'Too many requests; try again later',
} as const;

type Method = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
interface RouteFacts {
  authenticated: boolean;
  rateLimited: boolean;
  takesInput: boolean;
}
const docPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');
const has = (handlers: unknown, fn: unknown) => (Array.isArray(handlers) ? handlers.includes(fn) : handlers === fn);

/** `POST /v1/user/order/status` → `postUserOrderStatus`; `/checkout/{id}` → `getCheckoutById`. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/v1\//, '/')
    .split('/')
    .filter(Boolean)
    .map((seg) => {
      const param = /^\{(\w+)\}$/.exec(seg);
      return param ? `By-${param[1]}` : seg;
    })
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/** @fastify/swagger options; `authenticate` is read when the document is first built (after routes exist). */
export function openApiOptions(config: Config, authenticate: () => unknown): FastifyDynamicSwaggerOptions {
  const facts = new Map<string, RouteFacts>();
  return {
    openapi: {
      info: {
        title: 'Hyperdesk API',
        version: '1.0.0',
        description: 'Rent GPU cloud desktops by the hour. Authenticated calls carry the id token in the `idtoken` header.',
      },
      servers: [{ url: config.publicUrl, description: 'This server' }],
      components: {
        securitySchemes: {
          idtoken: { type: 'apiKey', in: 'header', name: 'idtoken', description: 'The id token (ES256 JWT) from sign-in or /v1/auth/refresh' },
        },
      },
    },
    transform: (input) => {
      const out = jsonSchemaTransform(input as never) as { schema: Record<string, unknown>; url: string };
      const { route } = input as unknown as { route: { method: string | string[]; preHandler?: unknown; onRequest?: unknown; config?: { rateLimit?: unknown } } };
      const schema = { ...(out.schema ?? {}) };
      if (schema.hide) return out;
      const path = docPath(out.url);
      // A route may declare its own `security` (e.g. a guard that authenticates inside); otherwise it is derived.
      const declared = schema.security as unknown[] | undefined;
      const authenticated = declared ? declared.length > 0 : has(route.preHandler, authenticate()) || has(route.onRequest, authenticate());
      for (const method of ([] as string[]).concat(route.method)) {
        facts.set(`${method.toLowerCase()} ${path}`, {
          authenticated,
          rateLimited: !!route.config?.rateLimit,
          takesInput: !!(schema.body || schema.querystring || schema.params),
        });
      }
      const method = ([] as string[]).concat(route.method)[0]!;
      schema.operationId ??= operationIdOf(method, path);
      schema.summary ??= SUMMARIES[`${method.toUpperCase()} ${path}`] ?? `${method.toUpperCase()} ${path}`;
      schema.security ??= authenticated ? [{ idtoken: [] }] : [];
      return { ...out, schema };
    },
    transformObject: (documentObject) => {
      const openapiObject = (documentObject as { openapiObject: object }).openapiObject;
      const doc = openapiObject as { paths?: Record<string, Partial<Record<Method, { responses?: Record<string, unknown> }>>>; components?: Record<string, unknown> };
      doc.components = {
        ...doc.components,
        schemas: { ...(doc.components?.schemas as object), Error: ERROR_SCHEMA },
        responses: Object.fromEntries(
          Object.entries(STANDARD_ERRORS).map(([status, description]) => [
            `Error${status}`,
            { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
          ]),
        ),
      };
      for (const [path, ops] of Object.entries(doc.paths ?? {})) {
        for (const [method, op] of Object.entries(ops) as [Method, { responses?: Record<string, unknown> }][]) {
          const f = facts.get(`${method} ${path}`);
          const responses = (op.responses ??= {});
          const add = (status: keyof typeof STANDARD_ERRORS) => {
            responses[status] ??= { $ref: `#/components/responses/Error${status}` };
          };
          for (const [status, description] of Object.entries(EXTRA_ERRORS[`${method.toUpperCase()} ${path}`] ?? {})) {
            if (status in STANDARD_ERRORS && !description) add(status as keyof typeof STANDARD_ERRORS);
            else responses[status] ??= { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
          }
          if (!f || f.takesInput) add('400');
          if (f?.authenticated) add('401');
          if (f?.rateLimited) add('429');
          if (!Object.keys(responses).some((s) => s.startsWith('4'))) add('400');
        }
      }
      return openapiObject;
    },
  };
}
