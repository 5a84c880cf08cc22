import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { manualClock } from '../src/lib/clock';
import { machines } from '../src/db/schema/index';
import { fakeProvider, fakeRfbServer, machineRow, seedMachine, seedUser } from './machines-fixtures';

/**
 * Issue 11.3: an outage never eats a customer's hours. The server (reconciler and metering) is "down" while the
 * test clock moves 10 minutes; meanwhile the desktop dies, or survives. Only minutes in which the desktop was seen
 * running are charged: at most 2 minutes around the outage, never the 10.
 */
const T0 = new Date('2030-05-01T09:00:10Z');
const MIN = 60_000;

describe('metering across a server outage', () => {
  const clock = manualClock(T0);
  let s: TestServer;
  let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
  let provider: ReturnType<typeof fakeProvider>;
  const db = () => s.app.ctx.db;
  /** One tick of a running server: a reconciler pass, then metering (what the jobs do). */
  const tick = async () => {
    await s.app.ctx.machines.reconciler.runOnce();
    await s.app.ctx.machines.metering.runOnce();
  };

  beforeAll(async () => {
    rfb = await fakeRfbServer();
    provider = fakeProvider(rfb.port);
    s = await startTestServer({ clock, overrides: { machineProvider: provider } });
  });
  afterAll(async () => {
    await s.close();
    await rfb.close();
  });

  async function runningMachine(): Promise<string> {
    clock.set(T0);
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid);
    await s.app.ctx.ledger.credit(db(), { machineId: id, minutes: 600, expiresAt: new Date(T0.getTime() + 30 * 24 * 60 * MIN), key: `c:${id}` });
    await db().update(machines).set({ desired: 'running', observed: 'processing', processingSince: T0 }).where(sql`${machines.id} = ${id}`);
    for (let i = 0; i < 20 && (await machineRow(db(), id)).observed !== 'online'; i++) await tick();
    expect(await machineRow(db(), id)).toMatchObject({ observed: 'online' });
    // Three healthy minutes, ticking every 5 s of test clock as the jobs would.
    for (let t = 0; t < 36; t++) {
      clock.advance(5_000);
      await tick();
    }
    return id;
  }

  const charged = async (id: string) => {
    const res = await db().execute(sql`select coalesce(-sum(minutes), 0)::int as m from ledger_entries where machine_id = ${id} and kind = 'debit'`);
    return Number((res.rows[0] as { m: number }).m);
  };

  it('charges at most 2 minutes for 10 minutes down when the desktop died during the outage', async () => {
    const id = await runningMachine();
    const before = await charged(id);
    expect(before).toBe(4); // minutes beginning at T0, +1, +2, +3 (charged when they begin)
    provider.desktops.delete(id); // the host rebooted: the desktop is gone, the row still says online
    clock.advance(10 * MIN); // the server is down all this time
    await tick(); // the restarted server finds the desktop gone
    expect(await charged(id)).toBeLessThanOrEqual(before + 2);
    expect(await machineRow(db(), id)).not.toMatchObject({ observed: 'online', onlineSince: new Date(T0) });
  });

  it('charges at most 2 minutes for 10 minutes down when the desktop outlived the outage, then meters again', async () => {
    const id = await runningMachine();
    const before = await charged(id);
    clock.advance(10 * MIN); // the server is down; the desktop keeps running but nobody sees it
    await tick(); // the restarted server sees the desktop again
    const after = await charged(id);
    expect(after).toBeLessThanOrEqual(before + 2);
    for (let t = 0; t < 24; t++) {
      clock.advance(5_000);
      await tick();
    }
    // Two more observed minutes are charged as usual.
    expect(await charged(id)).toBeGreaterThanOrEqual(after + 2);
    expect(await charged(id)).toBeLessThanOrEqual(after + 3);
    expect(await machineRow(db(), id)).toMatchObject({ observed: 'online' });
  });
});
