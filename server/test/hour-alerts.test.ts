import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { hourAlertsJob } from '../src/modules/alerts/service';
import { seedCourseMachines, seedMachine, seedUser } from './machines-fixtures';
import { DAY, MIN, T0, useHoursServer } from './hours-fixtures';

describe('hours that speak up (issue 22.4): alerts, each once', () => {
  const h = useHoursServer();
  const { clock, db, pass } = h;

  /** `minutes` used on the machine, as metering would: debits of the earliest-expiring lot with minutes left. */
  async function use(machineId: string, minutes: number) {
    for (let n = minutes; n > 0; ) {
      const [lot] = (
        await db().execute(sql`select id, remaining from ledger_lots where machine_id = ${machineId}::uuid and remaining > 0
          and expires_at > ${clock.now().toISOString()}::timestamptz order by expires_at limit 1`)
      ).rows as { id: string; remaining: number }[];
      const take = Math.min(n, Number(lot!.remaining));
      await db().execute(sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key)
        values (${randomUUID()}, ${machineId}::uuid, 'debit', ${-take}, ${lot!.id}::uuid, ${'test-use:' + randomUUID()})`);
      n -= take;
    }
  }
  const credit = (machineId: string, minutes: number, expiresAt: Date) =>
    h.s.app.ctx.ledger.credit(db(), { machineId, minutes, expiresAt, key: `test-credit:${randomUUID()}` });
  async function mails(email: string): Promise<{ kind: string; subject: string; body_text: string }[]> {
    const res = await db().execute(sql`select kind, subject, body_text from mail_outbox where to_addr = ${email} order by created_at, subject`);
    return res.rows as { kind: string; subject: string; body_text: string }[];
  }

  it('a machine: 20% then 1 hour, each mailed once, not before its threshold, not again after a restart', async () => {
    clock.set(T0);
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid, 'Unreal Engine · Spain');
    await credit(id, 600, new Date(T0.getTime() + 30 * DAY)); // 10 hours
    await use(id, 479); // 121 minutes left: above 20% (120)
    await pass();
    expect(await mails(u.email)).toEqual([]);

    await use(id, 1); // 120 left: 20%
    expect(await pass()).toBeGreaterThanOrEqual(1);
    await pass();
    let sent = await mails(u.email);
    expect(sent.map((m) => m.subject)).toEqual(['20% of your hours on Unreal Engine · Spain are left']);
    expect(sent[0]!.body_text).toContain('2 hours left of 10 hours');
    expect(sent[0]!.body_text).toContain('https://hd.example/setup');

    await use(id, 59); // 61 left: not yet one hour
    await pass();
    expect(await mails(u.email)).toHaveLength(1);
    await use(id, 1); // 60 left
    await pass();
    await pass(); // a second pass, then a restarted server's
    sent = await mails(u.email);
    expect(sent.map((m) => m.subject)).toEqual([
      '20% of your hours on Unreal Engine · Spain are left',
      'Only 1 hour left on Unreal Engine · Spain',
    ]);
    const rows = await db().execute(sql`select kind from hour_alerts where subject_id = ${id}::uuid order by kind`);
    expect(rows.rows.map((r) => r.kind)).toEqual(['low-1h', 'low-20']);

    // A top-up opens a new round: 60 + 600 left of 1200 granted is above 20%; nothing new until it falls again.
    await credit(id, 600, new Date(T0.getTime() + 30 * DAY));
    await pass();
    expect(await mails(u.email)).toHaveLength(2);
    await use(id, 420); // 240 of 1200 left: 20% of the new round
    await pass();
    expect((await mails(u.email)).map((m) => m.subject)).toEqual([
      '20% of your hours on Unreal Engine · Spain are left',
      '20% of your hours on Unreal Engine · Spain are left',
      'Only 1 hour left on Unreal Engine · Spain',
    ]); // (same clock instant: ordered by subject)
  });

  it('3 days before a lot expires: once per lot, not earlier, never for a lot used up', async () => {
    clock.set(T0);
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid, 'Unreal Engine · India');
    const firstExpiry = new Date(T0.getTime() + 10 * DAY);
    await credit(id, 6000, firstExpiry);
    await credit(id, 6000, new Date(T0.getTime() + 20 * DAY));
    clock.set(new Date(firstExpiry.getTime() - 3 * DAY - MIN)); // a minute before the notice is due
    await pass();
    expect(await mails(u.email)).toEqual([]);
    clock.advance(MIN);
    await pass();
    await pass();
    const sent = await mails(u.email);
    expect(sent.map((m) => m.subject)).toEqual([`100 hours on Unreal Engine · India expire on 11 May '30`]);
    expect(sent[0]!.kind).toBe('hours-expiry');

    // The second lot's notice when it is due: what is unused of it (30 minutes).
    await use(id, 12000 - 30);
    clock.set(new Date(T0.getTime() + 17 * DAY + MIN));
    await pass();
    const subjects = (await mails(u.email)).map((m) => m.subject);
    expect(subjects.filter((k) => k.includes('expire'))).toEqual([
      `100 hours on Unreal Engine · India expire on 11 May '30`,
      `0.5 hours on Unreal Engine · India expire on 21 May '30`,
    ]);

    // A lot used up before its notice is due says nothing.
    clock.set(T0);
    const v = await seedUser(db());
    const used = await seedMachine(db(), v.uid);
    await credit(used, 30, new Date(T0.getTime() + 5 * DAY));
    await use(used, 30);
    clock.set(new Date(T0.getTime() + 2 * DAY + MIN));
    await pass();
    expect((await mails(v.email)).filter((m) => m.kind === 'hours-expiry')).toEqual([]);
  });

  it('a course: the instructor gets the course alerts, never a student', async () => {
    clock.set(T0);
    const instructor = await seedUser(db(), { instructor: true });
    const student = await seedUser(db());
    const { courseId, ids } = await seedCourseMachines(db(), instructor.uid, 2);
    await db().execute(sql`update courses set name = 'Lighting 101', start_at = ${T0.toISOString()}::timestamptz,
      end_at = ${new Date(T0.getTime() + 30 * DAY).toISOString()}::timestamptz where id = ${courseId}::uuid`);
    await db().execute(sql`insert into roster (course_id, email) values (${courseId}::uuid, ${student.email})`);
    await db().execute(sql`insert into seats (machine_id, course_id, user_id) values (${ids[0]}::uuid, ${courseId}::uuid, ${student.uid}::uuid)`);
    for (const id of ids) await credit(id, 300, new Date(T0.getTime() + 30 * DAY)); // 2 × 5 hours
    await use(ids[0]!, 250);
    await pass();
    expect(await mails(instructor.email)).toEqual([]); // 350 of 600 left
    await use(ids[1]!, 230); // 120 of 600 left: 20% of the course (each machine alone is not the course)
    await pass();
    await use(ids[1]!, 60); // 60 left
    await pass();
    await pass();
    expect((await mails(instructor.email)).map((m) => m.subject)).toEqual([
      '20% of the hours of Lighting 101 are left',
      'Only 1 hour left on Lighting 101',
    ]);
    expect(await mails(student.email)).toEqual([]);

    clock.set(new Date(T0.getTime() + 27 * DAY));
    await pass();
    await pass();
    expect((await mails(instructor.email)).map((m) => m.subject).slice(2)).toEqual([`1 hour on Lighting 101 expire on 31 May '30`]);
    expect(await mails(student.email)).toEqual([]);
  });

  it('the job runs on the leader only', async () => {
    clock.set(T0);
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid);
    await credit(id, 120, new Date(T0.getTime() + 30 * DAY));
    await use(id, 100);
    const alerts = h.alerts();
    await hourAlertsJob(alerts, () => false).runOnce();
    expect(await mails(u.email)).toEqual([]);
    await hourAlertsJob(alerts, () => true).runOnce();
    expect((await mails(u.email)).map((m) => m.subject)).toEqual([
      '20% of your hours on Unreal Engine · Germany are left',
      'Only 1 hour left on Unreal Engine · Germany',
    ]);
  });
});
