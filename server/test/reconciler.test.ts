import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { manualClock } from '../src/lib/clock';
import { machines } from '../src/db/schema/index';
import { createReconciler, START_FAILED, startTimedOut, START_TIMEOUT_MS } from '../src/modules/machines/reconciler';
import { audienceOf, createEvents } from '../src/modules/machines/events';
import { fakeProvider, fakeRfbServer, machineRow, seedCourseMachines, seedMachine, seedUser } from './machines-fixtures';
import { until } from './machines-desktops';

describe('machine reconciler', () => {
  const clock = manualClock(new Date('2030-01-10T10:00:00Z'));
  let s: TestServer;
  let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
  let provider: ReturnType<typeof fakeProvider>;
  const pass = () => s.app.ctx.machines.reconciler.runOnce();
  const db = () => s.app.ctx.db;

  beforeAll(async () => {
    rfb = await fakeRfbServer();
    provider = fakeProvider(rfb.port);
    s = await startTestServer({ clock, overrides: { machineProvider: provider } });
  });
  afterAll(async () => {
    await s.close();
    await rfb.close();
  });

  async function newMachine() {
    const u = await seedUser(db());
    return seedMachine(db(), u.uid);
  }

  it('starts a requested machine (its clock in its country\'s zone) outside any transaction and marks it online once its VNC server answers', async () => {
    const id = await newMachine();
    provider.upAfterMs = 0;
    await s.app.ctx.machines.requestStart(db(), [id]);
    expect(await machineRow(db(), id)).toMatchObject({ desired: 'running', observed: 'processing', processingSince: clock.now() });
    await pass(); // start
    expect(provider.calls).toContainEqual({ op: 'start', id, homeKey: id, timeZone: 'Europe/Berlin' });
    await pass(); // observe
    expect(await machineRow(db(), id)).toMatchObject({ observed: 'online', onlineSince: clock.now(), processingSince: null });
    await pass(); // idempotent: nothing changes, no second start
    expect(provider.calls.filter((c) => c.op === 'start' && c.id === id)).toHaveLength(1);
  });

  it('a VNC port that does not speak RFB keeps the machine processing', async () => {
    const silent = createServer((sock) => sock.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    provider.rfbPort = (silent.address() as { port: number }).port;
    const id = await newMachine();
    await s.app.ctx.machines.requestStart(db(), [id]);
    await pass();
    await pass();
    expect((await machineRow(db(), id)).observed).toBe('processing');
    provider.rfbPort = rfb.port;
    await new Promise((res) => silent.close(res));
    await pass();
    expect((await machineRow(db(), id)).observed).toBe('online');
    await s.app.ctx.machines.requestStop(db(), [id]);
    await pass();
  });

  it('fails a start that does not come up in time: cleaned up, desired stopped, offline, with the reason', async () => {
    const id = await newMachine();
    provider.upAfterMs = null; // never answers
    await s.app.ctx.machines.requestStart(db(), [id]);
    await pass();
    clock.advance(START_TIMEOUT_MS - 1000);
    await pass();
    expect((await machineRow(db(), id)).observed).toBe('processing');
    clock.advance(2000);
    await pass();
    expect(await machineRow(db(), id)).toMatchObject({ desired: 'stopped', observed: 'offline', stopReason: startTimedOut(START_TIMEOUT_MS) });
    expect(provider.desktops.has(id)).toBe(false);
    expect(provider.calls.at(-1)).toEqual({ op: 'stop', id });
    provider.upAfterMs = 0;
  });

  it('counts a start\'s time from its first attempt, not from the request: a start that waited for a slot still starts', async () => {
    const id = await newMachine();
    provider.upAfterMs = null;
    await s.app.ctx.machines.requestStart(db(), [id]);
    // Waited behind 39 other first starts (or for a server to lead) longer than a start may take.
    clock.advance(START_TIMEOUT_MS + 60_000);
    await pass();
    expect(provider.calls).toContainEqual({ op: 'start', id, homeKey: id, timeZone: 'Europe/Berlin' });
    expect((await machineRow(db(), id)).observed).toBe('processing');
    clock.advance(START_TIMEOUT_MS - 1000);
    provider.upAfterMs = 0;
    await pass();
    expect(await machineRow(db(), id)).toMatchObject({ desired: 'running', observed: 'online' });
    await s.app.ctx.machines.requestStop(db(), [id]);
    await pass();
  });

  it('fails a start the provider refuses, with its reason', async () => {
    const id = await newMachine();
    provider.startError = 'no free X display';
    await s.app.ctx.machines.requestStart(db(), [id]);
    await pass();
    provider.startError = null;
    expect(await machineRow(db(), id)).toMatchObject({ desired: 'stopped', observed: 'offline', stopReason: START_FAILED });
  });

  it('starts all 40 machines of a course in one pass, 8 at a time', async () => {
    const owner = await seedUser(db(), { instructor: true });
    const { ids } = await seedCourseMachines(db(), owner.uid, 40);
    provider.startDelayMs = 50;
    provider.maxInFlight = 0;
    await s.app.ctx.machines.requestStart(db(), ids);
    await pass();
    provider.startDelayMs = 0;
    expect(provider.maxInFlight).toBe(8);
    expect(ids.every((id) => provider.desktops.has(id))).toBe(true);
    await pass();
    const rows = await db().select().from(machines).where(sql`${machines.courseId} is not null and ${machines.id} in ${ids}`);
    expect(rows.map((r) => r.observed)).toEqual(ids.map(() => 'online'));
    await s.app.ctx.machines.requestStop(db(), ids);
    await pass();
    expect(ids.some((id) => provider.desktops.has(id))).toBe(false);
  });

  it('ends desktops whose machine should not run (a stop that a crash interrupted)', async () => {
    const id = await newMachine();
    provider.desktops.set(id, { since: Date.now(), name: 'x' });
    await pass();
    expect(provider.desktops.has(id)).toBe(false);
  });

  it('brings back an online machine whose desktop died', async () => {
    const id = await newMachine();
    await s.app.ctx.machines.requestStart(db(), [id]);
    await pass();
    await pass();
    expect((await machineRow(db(), id)).observed).toBe('online');
    const firstSession = (await machineRow(db(), id)).onlineSince;
    provider.desktops.delete(id);
    clock.advance(10_000); // past the health-check interval
    await pass(); // sees the desktop gone: processing, start again
    await pass(); // sees it answer: online, a new session
    expect(provider.calls.filter((c) => c.op === 'start' && c.id === id)).toHaveLength(2);
    const row = await machineRow(db(), id);
    expect(row).toMatchObject({ observed: 'online', desired: 'running' });
    expect(row.onlineSince!.getTime()).toBe(firstSession!.getTime() + 10_000);
  });

  it('a start or stop request wakes a running loop at once', async () => {
    const id = await newMachine();
    await pass(); // the loop is active from its first pass on
    await s.app.ctx.machines.requestStart(db(), [id]);
    await until('kicked start', () => provider.desktops.has(id), 5000, 20);
    await until('online', async () => (await machineRow(db(), id)).observed === 'online', 5000, 20);
    await s.app.ctx.machines.requestStop(db(), [id]);
    await until('offline', async () => (await machineRow(db(), id)).observed === 'offline', 5000, 20);
    expect(provider.desktops.has(id)).toBe(false);
  });

  it('only one server reconciles: the advisory lock elects one leader (PostgreSQL)', async () => {
    await pass();
    expect(s.app.ctx.machines.reconciler.isLeader()).toBe(true);
    if (s.database.kind !== 'postgres') return; // PGlite is one process with one connection: always the leader
    // The second server's own provider: the leader, woken by the request, may start the machine meanwhile.
    const secondProvider = fakeProvider(rfb.port);
    const second = createReconciler({ database: s.database, clock, log: s.app.log, provider: secondProvider, events: createEvents(), settle: async () => {} });
    const id = await newMachine();
    await s.app.ctx.machines.requestStart(db(), [id]);
    await second.runOnce();
    expect(second.isLeader()).toBe(false);
    expect(secondProvider.calls).toEqual([]);
    await second.close();
    await s.app.ctx.machines.requestStop(db(), [id]);
  });

  it('tells the owner of a single machine, and the instructor of a course machine', async () => {
    const u = await seedUser(db());
    const single = await seedMachine(db(), u.uid);
    const owner = await seedUser(db(), { instructor: true });
    const { ids } = await seedCourseMachines(db(), owner.uid, 1);
    expect(await audienceOf(db(), single)).toEqual([u.uid]);
    expect(await audienceOf(db(), ids[0]!)).toEqual([owner.uid]);
  });
});
