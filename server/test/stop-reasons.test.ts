import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import type { StopKind } from '@hyperdesk/contract';
import { manualClock } from '../src/lib/clock';
import { startTestServer, type TestServer } from './harness';
import { createUser } from './identity-helpers';
import { toPrincipal } from '../src/modules/identity/users';
import { fakeProvider, fakeRfbServer, machineRow, seedCourseMachines, seedMachine } from './machines-fixtures';
import { COURSE_ENDED, HOURS_USED_UP } from '../src/modules/machines/metering';
import { START_FAILED } from '../src/modules/machines/reconciler';
import { STOPPED_BY_OPERATOR } from '../src/modules/admin/service';

/**
 * Issue 23: every stop records who or what stopped the machine (the console's "Last stop"), on each stop path:
 * the user's Stop, the instructor's Stop All, idle protection, hours used up, the course's end, an operator (stop,
 * force stop, disabling the account) and a start that failed.
 */
describe('stop reasons', () => {
  const clock = manualClock(new Date('2030-03-01T09:00:00Z'));
  let s: TestServer;
  let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
  let provider: ReturnType<typeof fakeProvider>;
  let admin: Awaited<ReturnType<typeof createUser>>;
  const db = () => s.database.db;

  beforeAll(async () => {
    rfb = await fakeRfbServer();
    provider = fakeProvider(rfb.port);
    s = await startTestServer({ clock, overrides: { machineProvider: provider } });
    admin = await createUser(s, { name: 'Olga Operator', admin: true });
  });
  afterAll(async () => {
    await s?.close();
    await rfb?.close();
  });

  /** A single user's machine with an hour of credit, asked to run (and online when `online`). */
  async function running(ownerId: string, o: { online?: boolean; minutes?: number } = {}): Promise<string> {
    const id = await seedMachine(db(), ownerId);
    if (o.minutes !== 0) await s.app.ctx.ledger.credit(db(), { machineId: id, minutes: o.minutes ?? 60, expiresAt: new Date(clock.now().getTime() + 86_400_000), key: `test:${id}` });
    await s.app.ctx.machines.requestStart(db(), [id]);
    if (o.online) await db().execute(sql`update machines set observed = 'online', online_since = ${clock.now()}, last_seen_at = ${clock.now()}, processing_since = null where id = ${id}`);
    return id;
  }

  /** An operator's call with a token signed now (the clock moves past an older token's expiry). */
  const asAdmin = async (method: string, path: string) =>
    s.call(method, path, { token: await s.app.ctx.tokens.sign(toPrincipal(admin.row, ['pwd', 'otp'])), body: method === 'POST' ? {} : undefined });

  /** The machine as the console's fleet shows it. */
  async function fleetRow(id: string) {
    const res = await asAdmin('GET', `/v1/admin/fleet?q=${id}`);
    expect(res.status).toBe(200);
    return res.body.items.find((m: { id: string }) => m.id === id) as { desired: string; stopReason: string | null; lastStop: { by: StopKind; at: string } | null };
  }

  async function expectStoppedBy(id: string, by: StopKind, stopReason: string | null) {
    const m = await fleetRow(id);
    expect(m).toMatchObject({ desired: 'stopped', stopReason, lastStop: { by, at: clock.now().toISOString() } });
  }

  it('the user stops their machine from the dashboard', async () => {
    const user = await createUser(s);
    const id = await running(user.row.id);
    expect((await fleetRow(id)).lastStop).toBeNull();
    const res = await s.call('POST', '/v1/user/slot', { token: user.token, body: { packId: id, terminate: true } });
    expect(res.body).toMatchObject({ status: 'STOPPED' });
    // The dashboard shows no text for a stop its own user asked for; the console knows who it was.
    await expectStoppedBy(id, 'user', null);
  });

  it('the instructor stops all machines of a course, and the course ends', async () => {
    const instructor = await createUser(s, { instructor: true });
    const { courseId, ids } = await seedCourseMachines(db(), instructor.row.id, 2);
    await s.app.ctx.machines.requestStart(db(), ids);
    const res = await s.call('POST', '/v1/pack/stop', { token: instructor.token, body: { packId: courseId, terminate: true } });
    expect(res.status).toBe(200);
    for (const id of ids) await expectStoppedBy(id, 'instructor', null);

    // A course whose end date passed: the courses module's end-of-course job stops what still runs.
    const later = await seedCourseMachines(db(), instructor.row.id, 1);
    await s.app.ctx.machines.requestStart(db(), later.ids);
    await db().execute(sql`update courses set end_at = ${new Date(clock.now().getTime() - 1000)} where id = ${later.courseId}`);
    expect(await s.app.ctx.courses.endDueCourses()).toBeGreaterThan(0);
    await expectStoppedBy(later.ids[0]!, 'course-end', COURSE_ENDED);
  });

  it('an operator stops, force stops, or disables the owner', async () => {
    const user = await createUser(s);
    const stopped = await running(user.row.id);
    expect((await asAdmin('POST', `/v1/admin/machines/${stopped}/stop`)).status).toBe(200);
    await expectStoppedBy(stopped, 'operator', STOPPED_BY_OPERATOR);

    const other = await createUser(s);
    const forced = await running(other.row.id, { online: true });
    expect((await asAdmin('POST', `/v1/admin/machines/${forced}/force-stop`)).status).toBe(200);
    await expectStoppedBy(forced, 'operator', STOPPED_BY_OPERATOR);

    const third = await createUser(s);
    const disabled = await running(third.row.id);
    expect((await asAdmin('POST', `/v1/admin/users/${third.row.id}/disable`)).status).toBe(200);
    expect((await fleetRow(disabled)).lastStop).toMatchObject({ by: 'operator' });
  });

  it('metering stops a machine whose hours ran out, and idle protection one nobody used', async () => {
    const user = await createUser(s);
    const empty = await running(user.row.id, { online: true, minutes: 1 });
    const other = await createUser(s);
    const idle = await running(other.row.id, { online: true, minutes: 600 });
    clock.advance(2 * 60_000 + 1000);
    await db().execute(sql`update machines set last_seen_at = ${clock.now()} where id in (${empty}, ${idle})`);
    await s.app.ctx.machines.metering.runOnce();
    await expectStoppedBy(empty, 'hours', HOURS_USED_UP);
    expect((await machineRow(db(), idle)).desired).toBe('running');

    clock.advance(s.config.IDLE_STOP_MINUTES * 60_000);
    await s.app.ctx.connect.idleJob.runOnce();
    const m = await fleetRow(idle);
    expect(m).toMatchObject({ desired: 'stopped', lastStop: { by: 'idle', at: clock.now().toISOString() } });
    expect(m.stopReason).toMatch(/without use/);
  });

  it('a start keeps the last stop for the console and clears the text shown to the user', async () => {
    const user = await createUser(s);
    const id = await running(user.row.id);
    expect((await asAdmin('POST', `/v1/admin/machines/${id}/stop`)).status).toBe(200);
    const at = clock.now().toISOString();
    await db().execute(sql`update machines set observed = 'offline' where id = ${id}`);
    clock.advance(60_000);
    await s.app.ctx.machines.requestStart(db(), [id]);
    expect(await fleetRow(id)).toMatchObject({ desired: 'running', stopReason: null, lastStop: { by: 'operator', at } });
  });

  // Last: a pass makes this server the reconciler's leader, which then converges every later request by itself.
  it('a start the provider refuses stops the machine as a failure', async () => {
    const user = await createUser(s);
    const id = await running(user.row.id);
    provider.startError = 'no room on this host';
    try {
      await s.app.ctx.machines.reconciler.runOnce();
    } finally {
      provider.startError = null;
    }
    await expectStoppedBy(id, 'failure', START_FAILED);
  });
});
