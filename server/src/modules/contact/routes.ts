import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { ContactAnswer, CONTACT_FIELD_MAX } from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import type { Principal } from '../identity/tokens';
import { createContactService, successMessage, type ContactInput } from './service';

/** Bytes per field: a character can take up to 4 bytes in UTF-8; the character limits are checked after parsing. */
const FIELD_BYTES = CONTACT_FIELD_MAX.Query * 4;
const FIELDS = new Set(['name', 'email', 'Query', 'captcha', 'source']);
/** Per client IP (behind a proxy set TRUST_PROXY so req.ip is the visitor's address). */
export const CONTACT_RATE_LIMIT = { max: 5, timeWindow: 10 * 60 * 1000 };

class FormError extends Error {}

/**
 * POST /v1/contact: the form-mail endpoint of the Contact Us and Contact Support popups (spec §7).
 * Public; when a valid idtoken comes along, the caller's name and e-mail are used.
 */
export async function contactRoutes(v1: FastifyInstance, ctx: Ctx): Promise<void> {
  const contact = createContactService({ db: ctx.db, config: ctx.config, clock: ctx.clock, captcha: ctx.captcha, mailer: ctx.mailer, log: ctx.log });

  // Multipart parsing is registered only in this scope, with fields-only limits.
  await v1.register(async (scope) => {
    await scope.register(multipart, {
      limits: { files: 0, fields: 8, parts: 8, fieldSize: FIELD_BYTES, fieldNameSize: 32, headerPairs: 50 },
    });

    scope.post('/contact', {
      config: { rateLimit: CONTACT_RATE_LIMIT },
      schema: {
        tags: ['contact'],
        summary: 'Send the contact form (multipart: name, email, Query, captcha, source)',
        consumes: ['multipart/form-data'],
        response: { 200: ContactAnswer, 400: ContactAnswer, 401: ContactAnswer, 413: ContactAnswer, 415: ContactAnswer },
      },
    }, async (req, reply) => {
      if (!req.isMultipart()) {
        return reply.status(415).send({ success: false, message: 'Send the form as multipart/form-data.' });
      }
      const principal = await callerOf(req, ctx);
      if (principal === 'invalid') {
        return reply.status(401).send({ success: false, message: 'Your session has expired. Please log in again.' });
      }
      let input: ContactInput;
      try {
        input = await readFields(req);
      } catch (err) {
        if (err instanceof FormError) return reply.status(400).send({ success: false, message: err.message });
        const code = (err as { code?: string }).code ?? '';
        if (code.startsWith('FST_')) {
          return reply.status(413).send({ success: false, message: 'The form is too large or has unexpected parts.' });
        }
        throw err;
      }
      const result = await contact.submit(input, principal);
      if (!result.ok) return reply.status(400).send({ success: false, message: result.message });
      return { success: true, message: successMessage(result.email) };
    });
  });
}

/** The signed-in caller, null when anonymous, 'invalid' for a present but bad or expired token. */
async function callerOf(req: FastifyRequest, ctx: Ctx): Promise<Principal | null | 'invalid'> {
  const header = req.headers.idtoken;
  const token = Array.isArray(header) ? header[0] : header;
  if (!token) return null;
  try {
    return await ctx.tokens.verify(token);
  } catch {
    return 'invalid';
  }
}

async function readFields(req: FastifyRequest): Promise<ContactInput> {
  const input: Record<string, string> = {};
  for await (const part of req.parts()) {
    if (part.type === 'file') throw new FormError('Attachments are not accepted.');
    if (!FIELDS.has(part.fieldname)) continue;
    if (part.valueTruncated) throw new FormError(tooLong(part.fieldname));
    if (input[part.fieldname] !== undefined) throw new FormError(`The field ${part.fieldname} was sent twice.`);
    const value = typeof part.value === 'string' ? part.value : String(part.value);
    input[part.fieldname] = value;
  }
  for (const key of ['name', 'email', 'Query'] as const) {
    const v = input[key];
    if (v !== undefined && v.trim().length > CONTACT_FIELD_MAX[key]) throw new FormError(tooLong(key));
  }
  return input;
}

function tooLong(field: string): string {
  if (field === 'name') return `Your name is too long (at most ${CONTACT_FIELD_MAX.name} characters).`;
  if (field === 'email') return `Your e-mail address is too long (at most ${CONTACT_FIELD_MAX.email} characters).`;
  if (field === 'Query') return `Your query is too long (at most ${CONTACT_FIELD_MAX.Query} characters).`;
  return 'The form has a field that is too long.';
}
