import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Unauthorized } from '../errors';
import type { Principal } from '../lib/principal';

/**
 * Request authentication helpers used by every module's routes. Imports no module (only errors and the Principal
 * type), so routes depend on this low file instead of on app.ts, which imports the modules.
 */
declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyInstance {
    /** preHandler that requires a valid `idtoken` header and sets request.principal. */
    authenticate(req: FastifyRequest): Promise<void>;
  }
}

/** Reads the verified caller; routes behind `authenticate` always have one. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new Unauthorized();
  return req.principal;
}

/**
 * Adds `request.principal` and the `authenticate` preHandler: it requires an `idtoken` header, verifies it with
 * `verify` (identity's self-contained ES256 check, no database read) and sets request.principal.
 */
export function registerAuthentication(app: FastifyInstance, verify: (token: string) => Promise<Principal>): void {
  app.decorateRequest('principal', undefined);
  app.decorate('authenticate', async (req: FastifyRequest): Promise<void> => {
    const header = req.headers.idtoken;
    const token = Array.isArray(header) ? header[0] : header;
    if (!token) throw new Unauthorized('Sign in to continue.', 'auth/no-token');
    req.principal = await verify(token);
  });
}
