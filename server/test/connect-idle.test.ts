import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_CLOSE } from '@hyperdesk/contract';
import { sql } from 'drizzle-orm';
import { manualClock } from '../src/lib/clock';
import { idleJobIntervalMs } from '../src/modules/connect/idle';
import type { Endpoint } from '../src/modules/machines/providers/types';
import { startTestServer, type TestServer } from './harness';
import { fakeDesktop, fakeProvider, freshToken, machineRow, openGateway, seedMachine, seedUser, ticketFor, until, type FakeDesktop, type GatewayClient, type SeededUser } from './connect-fixtures';

const MIN = 60_000;
const clock = manualClock(new Date('2030-05-01T08:00:00Z'));
const endpoints = new Map<string, Endpoint>();
let s: TestServer;
let user: SeededUser;
let desk: FakeDesktop;

beforeAll(async () => {
  s = await startTestServer({ clock, overrides: { machineProvider: fakeProvider(endpoints) } });
  user = await seedUser(s);
  desk = await fakeDesktop('desk');
});
afterAll(async () => {
  await s?.close();
  await desk?.close();
});

const idleJob = () => s.app.ctx.connect.idleJob;
const REASON = 'Stopped after 20 minutes without use.';

async function onlineMachine() {
  const id = await seedMachine(s, { ownerId: user.id });
  endpoints.set(id, desk.endpoint);
  return id;
}

async function connect(id: string) {
  const { wsPath } = await ticketFor(s, await freshToken(s, user), id);
  const c = await openGateway(s, wsPath);
  await c.text('hello');
  return c;
}

let pingSeq = 0;
/** Messages are ordered: once the answer to this ping is in, everything the server sent before it is too. */
async function roundTrip(c: GatewayClient) {
  const t = ++pingSeq;
  c.ws.send(JSON.stringify({ type: 'ping', t }));
  await until(() => c.texts.some((m) => m.type === 'pong' && m.t === t), 'the pong');
}

/** A PointerEvent as noVNC sends it: one RFB message in one frame. */
const pointer = () => Buffer.from([5, 0, 0, 40, 0, 40]);
/** A FramebufferUpdateRequest: noVNC sends these all the time; they are not use. */
const updateRequest = () => Buffer.from([3, 1, 0, 0, 0, 0, 5, 0, 3, 32]);

describe('idle protection', () => {
  it('runs as a job every 30 seconds', () => {
    expect(s.app.ctx.jobs).toContain(idleJob());
    expect(idleJob().intervalMs).toBe(30_000);
  });

  it('looks every eighth of a short limit, so a one-minute limit stops on time', () => {
    expect([20 * MIN, 4 * MIN, MIN, 10_000].map(idleJobIntervalMs)).toEqual([30_000, 30_000, 7_500, 5_000]);
  });

  it('stops a running machine nobody connects to, 20 minutes after it came online', async () => {
    const id = await onlineMachine();
    clock.advance(19 * MIN + 59_000);
    await idleJob().runOnce();
    expect((await machineRow(s, id)).desired).toBe('running');
    clock.advance(1000);
    await idleJob().runOnce();
    const row = await machineRow(s, id);
    expect(row.desired).toBe('stopped');
    expect(row.stopReason).toBe(REASON);
  });

  it("tells a connected student that the class ends, with its own reason (nothing in the tab keeps the machine on)", async () => {
    const id = await onlineMachine();
    const c = await connect(id);
    const endsAt = new Date(clock.now().getTime() + 5 * MIN);
    expect(s.app.ctx.connect.gateway.warn(id, endsAt, 'class-end', 'Europe/Berlin')).toBe(1);
    // The tab shows the end on the course's wall clock, as the dashboard's "Class now, until …" does.
    expect(await c.text('idle-warning')).toEqual({ type: 'idle-warning', stopAt: endsAt.toISOString(), reason: 'class-end', timeZone: 'Europe/Berlin' });
    expect(s.app.ctx.connect.gateway.warn(id, endsAt, 'class-end')).toBe(0); // once per stop time
    c.ws.send(pointer()); // working on does not bring it back
    await roundTrip(c);
    expect(s.app.ctx.connect.gateway.warn(id, endsAt, 'class-end')).toBe(0);
    expect(c.texts.filter((t) => t.type === 'idle-warning')).toHaveLength(1);
    c.ws.close();
  });

  it('warns a connected user who does nothing 5 minutes before, then stops the machine and says why', async () => {
    const id = await onlineMachine();
    clock.advance(10 * MIN);
    const c = await connect(id); // connecting is use: the 20 minutes start again
    c.ws.send(updateRequest()); // ...but the viewer's own update requests are not
    clock.advance(14 * MIN);
    await idleJob().runOnce();
    await roundTrip(c);
    expect(c.texts.find((t) => t.type === 'idle-warning')).toBeUndefined();
    clock.advance(MIN);
    await idleJob().runOnce();
    const warning = await c.text('idle-warning');
    expect(new Date(warning.stopAt).getTime()).toBe(clock.now().getTime() + 5 * MIN);
    await idleJob().runOnce(); // one warning per idle stretch
    await roundTrip(c); // anything sent before the pong has arrived
    expect(c.texts.filter((t) => t.type === 'idle-warning')).toHaveLength(1);
    expect((await machineRow(s, id)).desired).toBe('running');

    clock.advance(5 * MIN);
    await idleJob().runOnce();
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.machineStopped);
    expect(c.texts.find((t) => t.type === 'stopped')).toEqual({ type: 'stopped', code: 'idle', reason: REASON });
    expect(await machineRow(s, id)).toMatchObject({ desired: 'stopped', stopReason: REASON });
  });

  it('counts keyboard and mouse input and the "I\'m still here" answer as use', async () => {
    const id = await onlineMachine();
    const c = await connect(id);
    clock.advance(16 * MIN);
    await idleJob().runOnce();
    await c.text('idle-warning');

    const before = desk.received.length;
    c.ws.send(pointer());
    await until(() => desk.received.length > before, 'the input at the desktop');
    clock.advance(16 * MIN); // 32 minutes connected, 16 since the input
    await idleJob().runOnce();
    expect((await machineRow(s, id)).desired).toBe('running');
    await until(() => c.texts.filter((t) => t.type === 'idle-warning').length === 2, 'a second warning');

    c.ws.send(JSON.stringify({ type: 'active' }));
    c.ws.send(JSON.stringify({ type: 'ping', t: 1 })); // answered after the server read 'active'
    await c.text('pong');
    clock.advance(19 * MIN);
    await idleJob().runOnce();
    expect((await machineRow(s, id)).desired).toBe('running');
    clock.advance(MIN);
    await idleJob().runOnce();
    expect((await machineRow(s, id)).desired).toBe('stopped');
    await c.closed;
  });

  // PostgreSQL only: PGlite has one connection, so nothing can hold the session's row while the gateway writes it.
  it.skipIf(!process.env.DATABASE_URL)('waits for an input write still in flight before it judges, so fresh input always counts', async () => {
    const id = await onlineMachine();
    const c = await connect(id);
    // Another connection holds the session's row: the input's write (made at once: the session's first input) waits.
    const holder = await s.database.pinned();
    try {
      await holder.exec(`begin; select id from connect_sessions where machine_id = '${id}' for update`);
      const before = desk.received.length;
      c.ws.send(pointer());
      await until(() => desk.received.length > before, 'the input at the desktop'); // marked, and its write sent
      let flushed = false;
      const flushing = s.app.ctx.connect.gateway.flushInput().then(() => (flushed = true));
      await s.database.rows(sql`select 1`); // a round trip to PostgreSQL on another connection
      expect(flushed).toBe(false); // still waiting for the write (the old flush returned at once: "already written")
      await holder.exec('commit');
      await flushing;
    } finally {
      await holder.exec('commit').catch(() => undefined); // after a failed check too: the held write goes through
      holder.release();
    }
    const [row] = await s.database.rows<{ at: Date | null }>(sql`select last_input_at as at from connect_sessions where machine_id = ${id}`);
    expect(row?.at).not.toBeNull();
    c.ws.close();
  });

  it('counts from the last disconnect when the user leaves', async () => {
    const id = await onlineMachine();
    clock.advance(15 * MIN);
    const c = await connect(id);
    clock.advance(3 * MIN);
    c.ws.close();
    await until(async () => {
      const { connectSessions } = await import('../src/db/schema/index');
      const { eq } = await import('drizzle-orm');
      const [r] = await s.app.ctx.db.select().from(connectSessions).where(eq(connectSessions.machineId, id));
      return r?.closedAt;
    }, 'the session to be recorded closed');
    clock.advance(19 * MIN);
    await idleJob().runOnce();
    expect((await machineRow(s, id)).desired).toBe('running');
    clock.advance(MIN);
    await idleJob().runOnce();
    expect((await machineRow(s, id)).desired).toBe('stopped');
  });

  it('never stops a machine that is still starting, or one that is already stopping', async () => {
    const starting = await seedMachine(s, { ownerId: user.id, observed: 'processing' });
    const stopping = await seedMachine(s, { ownerId: user.id, observed: 'online', desired: 'stopped', stopReason: 'by hand' });
    clock.advance(60 * MIN);
    await idleJob().runOnce();
    expect(await machineRow(s, starting)).toMatchObject({ desired: 'running', stopReason: null });
    expect(await machineRow(s, stopping)).toMatchObject({ stopReason: 'by hand' });
  });
});

describe('IDLE_STOP_MINUTES', () => {
  it('sets the idle time and the reason the dashboard shows', async () => {
    const c2 = manualClock(new Date('2030-05-02T08:00:00Z'));
    const s2 = await startTestServer({ clock: c2, env: { IDLE_STOP_MINUTES: '8' }, overrides: { machineProvider: fakeProvider(new Map()) } });
    try {
      const u = await seedUser(s2);
      const id = await seedMachine(s2, { ownerId: u.id });
      c2.advance(7 * MIN);
      await s2.app.ctx.connect.idleJob.runOnce();
      expect((await machineRow(s2, id)).desired).toBe('running');
      c2.advance(MIN);
      await s2.app.ctx.connect.idleJob.runOnce();
      expect(await machineRow(s2, id)).toMatchObject({ desired: 'stopped', stopReason: 'Stopped after 8 minutes without use.' });
    } finally {
      await s2.close();
    }
  });
});
