import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { seedCourseMachines, seedMachine, seedUser, signFor } from './machines-fixtures';
import { DAY, MIN, T0, useHoursServer } from './hours-fixtures';

describe('GET /v1/user/hours/notices: the forecast and the active alert (issue 22.4)', () => {
  const h = useHoursServer();
  const { clock, db, pass } = h;

  /** `minutes` metered minutes starting at `from`, keyed as metering keys them (meter:<id>:<epoch minute>). */
  async function meter(machineId: string, from: Date, minutes: number) {
    for (let i = 0; i < minutes; i++) {
      const m = Math.floor(from.getTime() / MIN) + i;
      const r = await h.s.app.ctx.ledger.debitMinute(db(), { machineId, key: `meter:${machineId}:${m}`, at: new Date(m * MIN) });
      expect(r.debited).toBe(true);
    }
  }
  const notices = async (u: { uid: string; email: string }) => {
    const r = await h.s.call('GET', '/v1/user/hours/notices', { token: await signFor(h.s.app.ctx.tokens, u) });
    expect(r.status).toBe(200);
    return r.body.notices as { packId: string; runOutAt: string | null; alert: { kind: string; text: string } | null }[];
  };

  it('unused: no forecast, no alert; answers 401 without a token', async () => {
    clock.set(T0);
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid);
    await h.s.app.ctx.ledger.credit(db(), { machineId: id, minutes: 600, expiresAt: new Date(T0.getTime() + 30 * DAY), key: `c:${id}` });
    expect(await notices(u)).toEqual([{ packId: id, runOutAt: null, alert: null }]);
    expect((await h.s.call('GET', '/v1/user/hours/notices')).status).toBe(401);
  });

  it('pace since the first use when shorter than 7 days, then over the last 7 days', async () => {
    clock.set(T0);
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid);
    await h.s.app.ctx.ledger.credit(db(), { machineId: id, minutes: 3000, expiresAt: new Date(T0.getTime() + 30 * DAY), key: `c:${id}` });
    await meter(id, T0, 60); // 60 minutes on the first day
    clock.set(new Date(T0.getTime() + DAY)); // a day since the first use: 60 min/day, 2940 left → 49 days: past the expiry
    expect((await notices(u))[0]!.runOutAt).toBeNull();
    await meter(id, new Date(T0.getTime() + DAY), 240); // 300 used in 1 day + 240 min: 2700 left
    clock.set(new Date(T0.getTime() + 2 * DAY)); // 300 minutes in 2 days + 1 min (2881 minutes)
    const expected = new Date(clock.now().getTime() + Math.round((2700 / (300 / 2881)) * MIN));
    expect((await notices(u))[0]!.runOutAt).toBe(expected.toISOString());

    // 9 days after the first use the window is the last 7 days: only the 240 minutes of day 2 count.
    clock.set(new Date(T0.getTime() + 8 * DAY));
    const weekly = new Date(clock.now().getTime() + Math.round((2700 / (240 / (7 * 24 * 60))) * MIN));
    expect(weekly.getTime()).toBeGreaterThan(T0.getTime() + 30 * DAY); // slower than the expiry: nothing to say
    expect((await notices(u))[0]!.runOutAt).toBeNull();
    await meter(id, new Date(T0.getTime() + 8 * DAY - 2000 * MIN), 1500);
    const fast = new Date(clock.now().getTime() + Math.round((1200 / ((240 + 1500) / (7 * 24 * 60))) * MIN));
    expect((await notices(u))[0]!.runOutAt).toBe(fast.toISOString());
  });

  it('the active alert for the owner; a course: the instructor sees it, a student gets nothing', async () => {
    clock.set(T0);
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid, 'Unreal Engine · Spain');
    await h.s.app.ctx.ledger.credit(db(), { machineId: id, minutes: 300, expiresAt: new Date(T0.getTime() + 30 * DAY), key: `c:${id}` });
    await meter(id, T0, 250);
    clock.set(new Date(T0.getTime() + 250 * MIN));
    expect((await notices(u))[0]!.alert).toBeNull(); // no alert raised yet (the job has not run)
    await pass();
    expect((await notices(u))[0]!.alert).toEqual({ kind: 'low-1h', text: 'Only 1 hour left on Unreal Engine · Spain.' });
    // A top-up ends the alert.
    await h.s.app.ctx.ledger.credit(db(), { machineId: id, minutes: 600, expiresAt: new Date(T0.getTime() + 30 * DAY), key: `c2:${id}` });
    expect((await notices(u))[0]!.alert).toBeNull();

    const instructor = await seedUser(db(), { instructor: true });
    const student = await seedUser(db());
    const { courseId, ids } = await seedCourseMachines(db(), instructor.uid, 1);
    await db().execute(sql`update courses set name = 'Lighting 101', end_at = ${new Date(T0.getTime() + 30 * DAY).toISOString()}::timestamptz where id = ${courseId}::uuid`);
    await db().execute(sql`insert into roster (course_id, email) values (${courseId}::uuid, ${student.email})`);
    await h.s.app.ctx.ledger.credit(db(), { machineId: ids[0]!, minutes: 600, expiresAt: new Date(T0.getTime() + 30 * DAY), key: `c:${ids[0]}` });
    await meter(ids[0]!, T0, 490);
    await pass();
    const [course] = await notices(instructor);
    expect(course!.packId).toBe(courseId);
    expect(course!.alert).toEqual({ kind: 'low-20', text: 'Only 20% of the hours are left on Lighting 101.' });
    expect(course!.runOutAt).not.toBeNull();
    expect(await notices(student)).toEqual([]);
  });
});
