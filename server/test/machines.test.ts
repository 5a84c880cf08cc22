import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness';
import { startJobs } from '../src/lib/jobs';
import { NO_HOURS_MESSAGE, UNAVAILABLE_MESSAGE } from '../src/modules/machines/routes';
import { until, vncHandshake } from './machines-desktops';
import { fakeProvider, machineRow, openEvents, seedMachine, seedUser, signFor } from './machines-fixtures';
import { lxdDeployment, type LxdDeployment } from './lxd-fixtures';

const DAY = 86_400_000;

/** POST /v1/user/slot and GET /v1/user/events over real HTTP, with real desktops (LXD) and the reconciler running. */
describe('machines API', () => {
  let d: LxdDeployment;
  let s: TestServer;
  let jobs: { stop(): Promise<void> };
  const db = () => s.app.ctx.db;
  /** Pids of a program inside a machine's instance. */
  const pidsOf = async (id: string, comm: string) => (await d.rootShell(id, `pgrep -x ${comm}; true`)).trim().split('\n').filter(Boolean);

  beforeAll(async () => {
    d = await lxdDeployment();
    s = await startTestServer({ overrides: { machineProvider: d.provider } });
    jobs = startJobs(s.app.ctx.jobs.filter((j) => j.name.startsWith('machines-')), s.app.log);
  }, 3_600_000); // a fresh machine builds the desktop image first (host-setup.sh)
  afterAll(async () => {
    await jobs?.stop();
    await s?.close();
    await d?.close();
  }, 120_000);

  async function customer(minutes: number) {
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid, `Desk ${u.uid.slice(0, 4)}`);
    if (minutes) await s.app.ctx.ledger.credit(db(), { machineId: id, minutes, expiresAt: new Date(Date.now() + 30 * DAY), key: `t:${id}` });
    return { id, token: await signFor(s.app.ctx.tokens, u) };
  }
  const slot = (token: string, body: object) => s.call('POST', '/v1/user/slot', { token, body });

  it('needs a signed-in caller', async () => {
    expect((await s.call('POST', '/v1/user/slot', { body: { packId: 'x' } })).status).toBe(401);
    expect((await s.call('GET', '/v1/user/events')).status).toBe(401);
  });

  it("answers 404 for unknown ids and other users' machines, for start and stop alike", async () => {
    const mine = await customer(60);
    const theirs = await customer(60);
    for (const body of [{ packId: theirs.id }, { packId: theirs.id, terminate: true }, { packId: 'nope' }, { packId: crypto.randomUUID() }]) {
      const res = await slot(mine.token, body);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ statusCode: 404, message: 'Machine not found.' });
    }
    expect((await machineRow(db(), theirs.id)).desired).toBe('stopped');
    expect((await slot(mine.token, { packId: 'x'.repeat(101) })).status).toBe(400);
  });

  it('refuses to start a machine without hours, with a clear message, and starts nothing', async () => {
    const c = await customer(0);
    const res = await slot(c.token, { packId: c.id });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ message: NO_HOURS_MESSAGE, code: 'machine/no-hours' });
    expect(await machineRow(db(), c.id)).toMatchObject({ desired: 'stopped', observed: 'offline' });
  });

  it('20 concurrent starts create one desktop; it comes online, pushed to the owner, then RUNNING', async () => {
    const c = await customer(60);
    const stream = await openEvents(s.base, c.token);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toMatch(/^text\/event-stream/);

    const answers = await Promise.all(Array.from({ length: 20 }, () => slot(c.token, { packId: c.id })));
    for (const a of answers) expect(a).toMatchObject({ status: 200, body: { status: 'WAIT', url: `/v1/slot/connect?packId=${c.id}` } });
    expect((await machineRow(db(), c.id)).observed).toBe('processing');

    await until('online', async () => (await machineRow(db(), c.id)).observed === 'online', 240_000);
    await until('balance event', () => stream.events.includes('balance'), 5000, 20);
    expect(await pidsOf(c.id, 'Xvnc')).toHaveLength(1);
    expect(await s.app.ctx.machines.provider.list()).toEqual([c.id]);

    const ep = await s.app.ctx.machines.endpointOf(c.id);
    expect((await vncHandshake(ep!)).name).toBe((await machineRow(db(), c.id)).name);
    expect((await slot(c.token, { packId: c.id })).body).toEqual({ status: 'RUNNING', url: `/v1/slot/connect?packId=${c.id}` });

    // Stop: STOPPED at once, the desktop ends, offline is pushed.
    const seen = stream.events.length;
    const stop = await slot(c.token, { packId: c.id, terminate: true });
    expect(stop.body).toEqual({ status: 'STOPPED', url: `/v1/slot/connect?packId=${c.id}` });
    await until('offline', async () => (await machineRow(db(), c.id)).observed === 'offline', 60_000);
    expect(await d.provider.list()).toEqual([]); // the instance is stopped
    expect(await s.app.ctx.machines.endpointOf(c.id)).toBeNull();
    await until('offline event', () => stream.events.length > seen, 5000, 20);
    expect((await machineRow(db(), c.id)).stopReason).toBeNull();
    await stream.close();
  }, 420_000);

  it('a desktop whose X server is killed is restarted and online again within 30 s, with one desktop', async () => {
    const c = await customer(60);
    await slot(c.token, { packId: c.id });
    await until('online', async () => (await machineRow(db(), c.id)).observed === 'online', 240_000);
    const [x] = await pidsOf(c.id, 'Xvnc');
    expect(x).toBeDefined();
    await d.rootShell(c.id, `kill -KILL ${x}`);
    // The instance's init starts the desktop session again; the machine stays (or is again) online.
    await until('a new X server', async () => {
      const now = await pidsOf(c.id, 'Xvnc'); // read once: the list changes while the desktop restarts
      return now.length === 1 && now[0] !== x;
    }, 30_000, 200);
    await until('online again', async () => (await machineRow(db(), c.id)).observed === 'online' && !!(await s.app.ctx.machines.endpointOf(c.id)), 30_000, 100);
    expect(await pidsOf(c.id, 'Xvnc')).toHaveLength(1);
    expect(await d.provider.list()).toContain(c.id); // the same instance, running
    expect((await vncHandshake((await s.app.ctx.machines.endpointOf(c.id))!)).name).toBe((await machineRow(db(), c.id)).name);
    await slot(c.token, { packId: c.id, terminate: true });
    await until('offline', async () => (await machineRow(db(), c.id)).observed === 'offline', 60_000);
  }, 420_000);

  it('the event stream only carries events of the caller', async () => {
    const a = await customer(60);
    const b = await customer(60);
    const sa = await openEvents(s.base, a.token);
    const sb = await openEvents(s.base, b.token);
    await until('subscribed', () => s.app.ctx.events.subscribers() >= 2, 5000, 20);
    s.app.ctx.events.publish([(await machineRow(db(), a.id)).ownerUserId!], { type: 'balance' });
    await until('event for a', () => sa.events.length === 1, 5000, 20);
    expect(sb.events).toEqual([]);
    expect(sa.raw()).toContain('event: balance\ndata: {}\n\n');
    await sa.close();
    await sb.close();
    await until('unsubscribed', () => s.app.ctx.events.subscribers() === 0, 5000, 20);
  });
});

describe('machines API when the host cannot run desktops', () => {
  it('answers FAILED with the reason and starts nothing', async () => {
    const provider = { ...fakeProvider(1), preflight: async () => 'Machines cannot start on this server: Xvfb is not installed.' };
    const s = await startTestServer({ overrides: { machineProvider: provider } });
    try {
      const u = await seedUser(s.app.ctx.db);
      const id = await seedMachine(s.app.ctx.db, u.uid);
      await s.app.ctx.ledger.credit(s.app.ctx.db, { machineId: id, minutes: 60, expiresAt: new Date(Date.now() + DAY), key: `t:${id}` });
      const res = await s.call('POST', '/v1/user/slot', { token: await signFor(s.app.ctx.tokens, u), body: { packId: id } });
      expect(res.body).toEqual({ status: 'FAILED', url: `/v1/slot/connect?packId=${id}`, reason: UNAVAILABLE_MESSAGE });
      expect(await machineRow(s.app.ctx.db, id)).toMatchObject({ desired: 'stopped', observed: 'offline' });
    } finally {
      await s.close();
    }
  });
});
