import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { manualClock } from '../src/lib/clock';
import { machines } from '../src/db/schema/index';
import { PREPARE_RETRY_MS } from '../src/modules/machines/preparer';
import { fakeProvider, fakeRfbServer, machineRow, seedMachine, seedUser } from './machines-fixtures';

/**
 * New machines' desktops made ahead of their first start (machines/preparer.ts), by the reconciler's leader on a
 * recording provider: which machines, when not, once each, again after a reset, and a failure tried again later.
 */
describe('machines made ahead of their first start', () => {
  const clock = manualClock(new Date('2030-01-10T10:00:00Z'));
  let s: TestServer;
  let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
  const made: { machineId: string; name: string; homeKey?: string }[] = [];
  let failWith: string | null = null;
  const provider = Object.assign(fakeProvider(0), {
    async prepare(m: { machineId: string; name: string; homeKey?: string }) {
      if (failWith) throw new Error(failWith);
      made.push(m);
    },
  });
  const db = () => s.app.ctx.db;
  const reconciler = () => s.app.ctx.machines.reconciler;
  /** One pass, then the round of desktops it began. */
  const pass = async () => {
    await reconciler().runOnce();
    await reconciler().prepared();
  };
  const madeFor = (id: string) => made.filter((m) => m.machineId === id);
  /** The machines made before a test are out of its way: only its own are unprepared. */
  const settle = async () => {
    await db().update(machines).set({ preparedAt: clock.now() }).where(sql`${machines.preparedAt} is null`);
  };

  beforeAll(async () => {
    rfb = await fakeRfbServer();
    provider.rfbPort = rfb.port;
    s = await startTestServer({ clock, overrides: { machineProvider: provider } });
  });
  afterAll(async () => {
    await s.close();
    await rfb.close();
  });
  beforeEach(async () => {
    failWith = null;
    await settle();
  });

  it("makes a new machine's desktop once, with its name, home and clock's zone, and marks it made", async () => {
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid, 'Unreal Engine · Made ahead');
    expect((await machineRow(db(), id)).preparedAt).toBeNull();
    await pass();
    expect(madeFor(id)).toEqual([{ machineId: id, name: 'Unreal Engine · Made ahead', homeKey: undefined, timeZone: 'Europe/Berlin' }]);
    expect((await machineRow(db(), id)).preparedAt).toEqual(clock.now());
    await pass();
    expect(madeFor(id)).toHaveLength(1);
    expect(provider.calls.filter((c) => c.id === id)).toEqual([]); // made, never started
  });

  it("a course machine's desktop gets the home its seat has", async () => {
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid, 'Course seat');
    await db().update(machines).set({ homeKey: 'course-home-1' }).where(eq(machines.id, id));
    await pass();
    expect(madeFor(id)).toEqual([{ machineId: id, name: 'Course seat', homeKey: 'course-home-1', timeZone: 'Europe/Berlin' }]);
  });

  it('makes none while a machine starts, and none for a machine wanted running', async () => {
    const u = await seedUser(db());
    const waiting = await seedMachine(db(), u.uid, 'Waits');
    const v = await seedUser(db());
    const starting = await seedMachine(db(), v.uid, 'Starts');
    provider.upAfterMs = null; // the start never answers: it stays processing
    await s.app.ctx.machines.requestStart(db(), [starting]);
    await pass();
    await pass();
    expect(madeFor(waiting)).toEqual([]);
    expect(madeFor(starting)).toEqual([]);
    provider.upAfterMs = 0;
    await pass(); // online
    expect((await machineRow(db(), starting)).observed).toBe('online');
    await pass(); // nothing starts any more
    expect(madeFor(waiting)).toHaveLength(1);
    expect(madeFor(starting)).toEqual([]); // it has a desktop: its start made it
    await s.app.ctx.machines.requestStop(db(), [starting]);
    await pass();
    await pass();
    expect(madeFor(starting)).toEqual([]); // stopped, its desktop kept: nothing to make
  });

  it('a desktop that could not be made is tried again after a while, not on every pass', async () => {
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid);
    failWith = 'the engine is not reachable';
    await pass();
    expect((await machineRow(db(), id)).preparedAt).toBeNull();
    failWith = null;
    await pass();
    expect(madeFor(id)).toEqual([]);
    clock.advance(PREPARE_RETRY_MS);
    await pass();
    expect(madeFor(id)).toHaveLength(1);
    expect((await machineRow(db(), id)).preparedAt).not.toBeNull();
  });

  it('a stopped machine that was reset is made again from the image', async () => {
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid);
    await pass();
    expect(madeFor(id)).toHaveLength(1);
    await db().update(machines).set({ resetRequested: 'desktop' }).where(eq(machines.id, id));
    await pass();
    expect(provider.calls.filter((c) => c.id === id)).toEqual([{ op: 'reset', id, homeKey: id, eraseHome: false }]);
    await pass();
    expect(madeFor(id)).toHaveLength(2);
    expect((await machineRow(db(), id)).preparedAt).not.toBeNull();
  });
});
