import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, inArray } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { manualClock } from '../src/lib/clock';
import { mailOutbox, roster } from '../src/db/schema/index';
import { seedCourseOrder, seedUser } from '../src/modules/courses/fixtures/seed';
import type { Principal } from '../src/modules/identity/tokens';

/** The roster upload must not be a mail cannon (issue 11): list size, once a day per address, a daily budget. */

const DAY = 86_400_000;
const clock = manualClock(new Date('2031-03-01T09:00:00Z'));
const LIMIT = 8;
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ clock, env: { INVITE_DAILY_LIMIT: String(LIMIT) } });
});
afterAll(async () => s.close());

async function instructor() {
  const p = await seedUser(s.app.ctx.db, { instructor: true });
  return { p, token: await s.app.ctx.tokens.sign(p) };
}

async function course(owner: Principal, vms: number) {
  const startAt = new Date(clock.now().getTime() - DAY);
  const orderId = await seedCourseOrder(s.app.ctx.db, { userId: owner.uid, vms, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 60 * DAY) });
  return s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
}

async function upload(token: string, packId: string, emails: string[]) {
  const fd = new FormData();
  fd.append('packId', packId);
  fd.append('attachment', new Blob([emails.join('\n')]), 'students.csv');
  const res = await fetch(`${s.base}/v1/pack/emails`, { method: 'POST', headers: { idtoken: token }, body: fd });
  return { status: res.status, body: await res.json() };
}

const list = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}-${i}@example.com`);
const invitationsTo = async (emails: string[]) =>
  (await s.app.ctx.db.select().from(mailOutbox).where(and(eq(mailOutbox.kind, 'course-invitation'), inArray(mailOutbox.toAddr, emails)))).length;

describe('roster size', () => {
  it('holds at most 10 addresses per machine of the course', async () => {
    const t = await instructor();
    const id = await course(t.p, 2);
    const tooMany = await upload(t.token, id, list('big', 21));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ code: 'roster-too-long', message: 'This course has 2 machines, so its list can have at most 20 e-mail addresses.' });
    expect(await s.app.ctx.db.select().from(roster).where(eq(roster.courseId, id))).toHaveLength(0);
    expect(await invitationsTo(list('big', 21))).toBe(0);
    expect((await upload(t.token, id, list('fits', 6))).status).toBe(200);
  });

  it('holds at most 400 addresses whatever the course size', async () => {
    const t = await instructor();
    const id = await course(t.p, 40);
    const res = await upload(t.token, id, list('huge', 401));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'roster-too-long', message: 'A course list can have at most 400 e-mail addresses.' });
  });
});

describe('invitation e-mails', () => {
  it('alternating two lists invites each address once a day', async () => {
    const t = await instructor();
    const id = await course(t.p, 1);
    const a = list('alt-a', 3);
    const b = list('alt-b', 3);
    expect((await upload(t.token, id, a)).body).toMatchObject({ added: 3, invited: 3, notices: [] });
    expect((await upload(t.token, id, b)).body).toMatchObject({ added: 3, removed: 3, invited: 3, notices: [] });
    for (let i = 0; i < 4; i++) {
      const res = await upload(t.token, id, i % 2 ? b : a);
      expect(res.body).toMatchObject({ added: 3, removed: 3, total: 3, invited: 0, notices: ['3 invitations were not sent again: already invited today.'] });
    }
    expect(await invitationsTo(a)).toBe(3);
    expect(await invitationsTo(b)).toBe(3);

    // A day later, someone re-added after being removed is a real change and is invited again.
    clock.advance(DAY + 60_000);
    t.token = await s.app.ctx.tokens.sign(t.p); // the id token expired meanwhile
    expect((await upload(t.token, id, a)).body).toMatchObject({ added: 3, invited: 3, notices: [] });
    expect(await invitationsTo(a)).toBe(6);
  });

  it('one instructor sends at most INVITE_DAILY_LIMIT a day; the rest are invited on a later upload', async () => {
    const t = await instructor();
    const first = await course(t.p, 2);
    const second = await course(t.p, 1);
    const students = list('budget', 12);
    const res = await upload(t.token, first, students);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      added: 12,
      total: 12,
      invited: LIMIT,
      notices: [`4 invitations were not sent: you reached today's limit of ${LIMIT} invitation e-mails. Those students are on the list; upload it again tomorrow to invite them.`],
    });
    // The budget is the instructor's, across courses.
    expect((await upload(t.token, second, list('budget2', 2))).body).toMatchObject({ added: 2, invited: 0 });
    // Another instructor has a budget of their own.
    const other = await instructor();
    expect((await upload(other.token, await course(other.p, 1), list('other', 3))).body).toMatchObject({ invited: 3, notices: [] });
    expect(await invitationsTo(students)).toBe(LIMIT);

    clock.advance(DAY + 60_000);
    t.token = await s.app.ctx.tokens.sign(t.p);
    const later = await upload(t.token, first, students);
    expect(later.body).toMatchObject({ added: 0, invited: 4, notices: [] });
    expect(await invitationsTo(students)).toBe(12);
    expect((await upload(t.token, first, students)).body).toMatchObject({ invited: 0, notices: [] });
  });
});
