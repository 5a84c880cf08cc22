import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { z } from 'zod';
import {
  CheckoutAnswer,
  PackCostAnswer,
  PackCostBody,
  PackIdBody,
  PackRechargeBody,
  PackStartAnswer,
  RosterAnswer,
  RosterEmailBody,
  RosterInviteAnswer,
  RosterQuery,
  RosterRemoveAnswer,
  RosterSummary,
  SeatEndAnswer,
  SeatEndBody,
} from '@hyperdesk/contract';
import { principalOf } from '../../http/auth';
import type { Ctx } from '../../context';
import { BadRequest, Forbidden, HttpError } from '../../errors';
import type { Principal } from '../identity/tokens';
import { pricesMap } from './pricing';
import { decodeRosterFile, isRosterFileName, parseRoster } from './roster';

/** Student lists are text; 256 kB holds thousands of addresses with names. */
export const ROSTER_MAX_BYTES = 256 * 1024;
export const ROSTER_TOO_LARGE = 'The file is too large (at most 256 kB).';
export const ROSTER_FILE_TYPE = 'The student list must be a .csv or .txt file.';

// The VMs range is checked by the service so that the answer carries the spec's message (§5); the rest of the
// shape is the contract's.
const CostBody = PackCostBody.extend({ VMs: z.number().int() });
const RechargeBody = PackRechargeBody.extend({ VMs: z.number().int() });

function instructorOf(req: FastifyRequest): Principal {
  const principal = principalOf(req);
  if (!principal.instructor) throw new Forbidden('Course packs are for business accounts.', 'not-instructor');
  return principal;
}

/** /v1/pack/*: business users' course packs (spec §7, design §5). */
export async function courseRoutes(v1: FastifyInstance, ctx: Ctx): Promise<void> {
  const courses = ctx.courses;
  const auth = { preHandler: v1.authenticate };

  v1.post('/pack/cost', {
    ...auth,
    schema: { tags: ['courses'], summary: 'Prices of a course by hours per machine', body: CostBody, response: { 200: PackCostAnswer } },
  }, async (req) => {
    instructorOf(req);
    const quote = await courses.quote(req.body as z.infer<typeof CostBody>);
    return { prices: pricesMap(quote.prices) };
  });

  v1.post('/pack/recharge', {
    ...auth,
    config: { rateLimit: { max: 20, timeWindow: 60_000 } },
    schema: { tags: ['courses'], summary: 'Checkout of a course pack', body: RechargeBody, response: { 200: CheckoutAnswer } },
  }, async (req) => {
    const principal = instructorOf(req);
    const { url } = await courses.checkout(principal, req.body as z.infer<typeof RechargeBody>);
    return { url };
  });

  v1.post('/pack/start', {
    ...auth,
    schema: { tags: ['courses'], summary: 'Start All machines of a course', body: PackIdBody, response: { 200: PackStartAnswer } },
  }, async (req) => {
    const { packId } = req.body as z.infer<typeof PackIdBody>;
    return { status: await courses.startAll(principalOf(req), packId) };
  });

  v1.post('/pack/stop', {
    ...auth,
    schema: { tags: ['courses'], summary: 'Stop All machines of a course', body: PackIdBody, response: { 200: PackStartAnswer } },
  }, async (req) => {
    const { packId } = req.body as z.infer<typeof PackIdBody>;
    await courses.stopAll(principalOf(req), packId);
    return { status: 'STOPPED' as const };
  });

  // The roster one address at a time (issue 22): the list with each address's state and seat, add, remove, resend.
  v1.get('/pack/roster', {
    ...auth,
    schema: { tags: ['courses'], summary: "A course's student list: each address's state and seat", querystring: RosterQuery, response: { 200: RosterAnswer } },
  }, async (req) => courses.roster.list(principalOf(req), (req.query as z.infer<typeof RosterQuery>).packId));

  const rosterLimit = { rateLimit: { max: 60, timeWindow: 60_000 } };
  v1.post('/pack/roster/add', {
    ...auth,
    config: rosterLimit,
    schema: { tags: ['courses'], summary: 'Add one address to the student list and invite it', body: RosterEmailBody, response: { 200: RosterInviteAnswer } },
  }, async (req) => {
    const { packId, email } = req.body as z.infer<typeof RosterEmailBody>;
    return courses.roster.add(principalOf(req), packId, email);
  });

  v1.post('/pack/roster/remove', {
    ...auth,
    config: rosterLimit,
    schema: { tags: ['courses'], summary: 'Remove one address from the student list (its seat is freed)', body: RosterEmailBody, response: { 200: RosterRemoveAnswer } },
  }, async (req) => {
    const { packId, email } = req.body as z.infer<typeof RosterEmailBody>;
    return courses.roster.remove(principalOf(req), packId, email);
  });

  v1.post('/pack/roster/resend', {
    ...auth,
    config: rosterLimit,
    schema: { tags: ['courses'], summary: 'Send the invitation of one listed address again', body: RosterEmailBody, response: { 200: RosterInviteAnswer } },
  }, async (req) => {
    const { packId, email } = req.body as z.infer<typeof RosterEmailBody>;
    return courses.roster.resend(principalOf(req), packId, email);
  });

  v1.post('/pack/seat/end', {
    ...auth,
    config: rosterLimit,
    schema: { tags: ['courses'], summary: "End the session of the student at one of the course's machines (the seat is freed)", body: SeatEndBody, response: { 200: SeatEndAnswer } },
  }, async (req) => {
    const { packId, machineId } = req.body as z.infer<typeof SeatEndBody>;
    return courses.seatSessions.end(principalOf(req), packId, machineId);
  });

  // Multipart parsing exists only in this scope, limited to one small file and the packId field.
  await v1.register(async (scope) => {
    await scope.register(multipart, {
      limits: { files: 1, fileSize: ROSTER_MAX_BYTES, fields: 4, parts: 6, fieldSize: 200, fieldNameSize: 50, headerPairs: 50 },
    });
    scope.post('/pack/emails', {
      preHandler: scope.authenticate,
      config: { rateLimit: { max: 30, timeWindow: 60_000 } },
      schema: {
        tags: ['courses'],
        summary: 'Upload the student list of a course (multipart: attachment .csv/.txt, packId)',
        consumes: ['multipart/form-data'],
        response: { 200: RosterSummary },
      },
    }, async (req) => {
      const principal = principalOf(req);
      if (!req.isMultipart()) throw new HttpError(415, 'Send the student list as multipart/form-data.', 'bad-media-type');
      const { packId, file } = await readUpload(req);
      if (!file) throw new BadRequest('Choose a .csv or .txt file to upload.', 'roster-missing');
      if (!packId) throw new BadRequest('The packId field is required.', 'roster-pack');
      if (!isRosterFileName(file.name)) throw new BadRequest(ROSTER_FILE_TYPE, 'roster-type');
      const parsed = parseRoster(decodeRosterFile(file.bytes));
      return courses.replaceRoster(principal, packId, parsed);
    });
  });
}

async function readUpload(req: FastifyRequest): Promise<{ packId?: string; file?: { name: string; bytes: Buffer } }> {
  let packId: string | undefined;
  let file: { name: string; bytes: Buffer } | undefined;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        const bytes = await part.toBuffer();
        if (part.fieldname === 'attachment' && !file) file = { name: part.filename, bytes };
      } else if (part.fieldname === 'packId') {
        if (part.valueTruncated) throw new BadRequest('The packId field is too long.', 'roster-pack');
        packId = String(part.value).trim();
      }
    }
  } catch (err) {
    if (err instanceof HttpError) throw err;
    const code = (err as { code?: string }).code ?? '';
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw new HttpError(413, ROSTER_TOO_LARGE, 'roster-too-large');
    if (/^FST_(FILES|PARTS|FIELDS)_LIMIT$/.test(code)) throw new HttpError(413, 'Send one file and the packId field only.', 'roster-parts');
    if (code.startsWith('FST_')) throw new BadRequest('The upload could not be read. Please try again.', 'roster-upload');
    throw err;
  }
  return { packId, file };
}
