import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import {
  ClassAddBody,
  ClassChangeBody,
  ClassDeleteAnswer,
  ClassDeleteBody,
  NextClassesAnswer,
  TimetableAnswer,
  TimetableQuery,
} from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';

/** The class timetable (issue 22.1): a course's sessions for its instructor, and everyone's next class. */
export async function timetableRoutes(v1: FastifyInstance, ctx: Ctx): Promise<void> {
  const timetable = ctx.timetable;
  const auth = { preHandler: v1.authenticate };
  const limit = { rateLimit: { max: 60, timeWindow: 60_000 } };
  const fields = ({ kind, days, date, start, end, timeZone }: z.infer<typeof ClassAddBody>) => ({ kind, days, date, start, end, timeZone });

  v1.get('/pack/timetable', {
    ...auth,
    schema: { tags: ['courses'], summary: "A course's class sessions and its next class (its instructor only)", querystring: TimetableQuery, response: { 200: TimetableAnswer } },
  }, async (req) => timetable.list(principalOf(req), (req.query as z.infer<typeof TimetableQuery>).packId));

  v1.post('/pack/timetable/add', {
    ...auth,
    config: limit,
    schema: { tags: ['courses'], summary: 'Add a class session: weekly on some days or once on a date', body: ClassAddBody, response: { 200: TimetableAnswer } },
  }, async (req) => {
    const body = req.body as z.infer<typeof ClassAddBody>;
    return timetable.add(principalOf(req), body.packId, fields(body));
  });

  v1.post('/pack/timetable/change', {
    ...auth,
    config: limit,
    schema: { tags: ['courses'], summary: 'Change a class session', body: ClassChangeBody, response: { 200: TimetableAnswer } },
  }, async (req) => {
    const body = req.body as z.infer<typeof ClassChangeBody>;
    return timetable.update(principalOf(req), body.packId, body.id, fields(body));
  });

  v1.post('/pack/timetable/delete', {
    ...auth,
    config: limit,
    schema: { tags: ['courses'], summary: 'Delete a class session', body: ClassDeleteBody, response: { 200: ClassDeleteAnswer } },
  }, async (req) => {
    const body = req.body as z.infer<typeof ClassDeleteBody>;
    return timetable.remove(principalOf(req), body.packId, body.id);
  });

  v1.get('/user/classes', {
    ...auth,
    schema: { tags: ['courses'], summary: 'The next class of each course the user teaches or is a student of', response: { 200: NextClassesAnswer } },
  }, async (req) => ({ classes: await timetable.nextClasses(principalOf(req)) }));
}
