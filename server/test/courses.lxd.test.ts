import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, inArray } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { machines, seats } from '../src/db/schema/index';
import { seedCourseOrder, seedUser } from '../src/modules/courses/fixtures/seed';
import { until, vncHandshake } from './machines-desktops';
import { lxdDeployment, type LxdDeployment } from './lxd-fixtures';

const DAY = 86_400_000;

/** Start All / Stop All of a 3-machine course on real desktops (the lxd provider, as `npm start` runs it). */
describe('classroom on the lxd provider', () => {
  let d: LxdDeployment;
  let s: TestServer;
  const user = async (o: { instructor?: boolean } = {}) => {
    const p = await seedUser(s.app.ctx.db, o);
    return { p, token: await s.app.ctx.tokens.sign(p) };
  };
  const pass = () => s.app.ctx.machines.reconciler.runOnce();

  beforeAll(async () => {
    d = await lxdDeployment();
    s = await startTestServer({ overrides: { machineProvider: d.provider } });
  }, 3_600_000); // a fresh machine builds the desktop image first (host-setup.sh)
  afterAll(async () => {
    await s?.close();
    await d?.close();
  }, 120_000);

  it('starts the 3 desktops, seats two students on different ones, and stops them all', { timeout: 400_000 }, async () => {
    const instructor = await user({ instructor: true });
    const startAt = new Date(Date.now() - DAY);
    const orderId = await seedCourseOrder(s.app.ctx.db, { userId: instructor.p.uid, vms: 3, hours: 5, startAt, expiresAt: new Date(startAt.getTime() + 7 * DAY) });
    const courseId = await s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
    const ids = (await s.app.ctx.db.select({ id: machines.id }).from(machines).where(eq(machines.courseId, courseId))).map((r) => r.id);
    const [a, b] = [await user(), await user()];
    const fd = new FormData();
    fd.append('packId', courseId);
    fd.append('attachment', new Blob([`${a.p.email}\n${b.p.email}\n`]), 'students.txt');
    expect((await fetch(`${s.base}/v1/pack/emails`, { method: 'POST', headers: { idtoken: instructor.token }, body: fd })).status).toBe(200);

    const start = await s.call('POST', '/v1/pack/start', { token: instructor.token, body: { packId: courseId } });
    expect(start.body).toEqual({ status: 'WAIT' });
    await until('3 desktops online', async () => {
      await pass();
      const rows = await s.app.ctx.db.select({ observed: machines.observed }).from(machines).where(inArray(machines.id, ids));
      return rows.every((r) => r.observed === 'online');
    }, 240_000, 500);
    expect((await s.app.ctx.machines.provider.list()).sort()).toEqual([...ids].sort());

    const url = `/v1/slot/connect?packId=${courseId}`;
    const tickets = () => Promise.all([a, b].map((u) => s.call('POST', '/v1/slot/connect/ticket', { token: u.token, body: { url } })));
    // Start All gave two of the desktops the students' own homes (issues 11.4, 22.5): the tickets come at once.
    expect((await tickets()).map((t) => t.status)).toEqual([200, 200]);
    const held = await s.app.ctx.db.select().from(seats).where(eq(seats.courseId, courseId));
    expect(held).toHaveLength(2);
    const [ea, eb] = await Promise.all(held.map((h) => s.app.ctx.machines.endpointOf(h.machineId)));
    expect(ea).not.toEqual(eb);
    const names = await Promise.all([ea!, eb!].map((e) => vncHandshake(e)));
    const machineNames = await s.app.ctx.db.select({ id: machines.id, name: machines.name }).from(machines).where(inArray(machines.id, held.map((h) => h.machineId)));
    expect(names.map((n) => n.name).sort()).toEqual(machineNames.map((m) => m.name).sort());

    const stop = await s.call('POST', '/v1/pack/stop', { token: instructor.token, body: { packId: courseId, terminate: true } });
    expect(stop.body).toEqual({ status: 'STOPPED' });
    await until('desktops gone', async () => {
      await pass();
      return (await s.app.ctx.machines.provider.list()).length === 0;
    }, 60_000, 500);
    const rows = await s.app.ctx.db.select({ observed: machines.observed }).from(machines).where(inArray(machines.id, ids));
    expect(rows.map((r) => r.observed)).toEqual(['offline', 'offline', 'offline']);
  });
});
