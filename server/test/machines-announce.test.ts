import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/after-commit';
import { startTestServer, type TestServer } from './harness';
import { createUser } from './identity-helpers';
import { fakeProvider, fakeRfbServer, machineRow, seedMachine } from './machines-fixtures';

/**
 * A Start, Stop or Reset is announced (the reconciler woken on every server, the dashboards told) once the caller's
 * transaction has committed, never before: an announcement read before the commit finds the old state, and nothing
 * announces the machine again (a 30 ms timer stood in for the commit, and a busy database outran it).
 */
describe('machine requests are announced after their commit', () => {
  let s: TestServer;
  let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
  /** Whether the transaction's own work was over each time the reconciler was woken. */
  const woken: boolean[] = [];
  let txDone = true;
  const db = () => s.database.db;
  /** A machine of its own user's (one single machine per user and region). */
  const newMachine = async () => seedMachine(db(), (await createUser(s, { name: 'Anna Announce' })).row.id);

  beforeAll(async () => {
    rfb = await fakeRfbServer();
    s = await startTestServer({ overrides: { machineProvider: fakeProvider(rfb.port) } });
    s.app.ctx.events.onSignal('reconcile', () => woken.push(txDone));
  });
  afterAll(async () => {
    await s?.close();
    await rfb?.close();
  });

  it('a start in a transaction that holds on wakes the reconciler only after it committed, once', async () => {
    const id = await newMachine();
    woken.length = 0;
    await transaction(db(), async (tx) => {
      txDone = false;
      await s.app.ctx.machines.requestStart(tx, [id]);
      // The transaction holds on well past the old timer's 30 ms (a busy database, a long caller).
      await new Promise((r) => setTimeout(r, 150));
      txDone = true;
    });
    await s.app.ctx.machines.announced();
    expect(woken).toEqual([true]);
    expect((await machineRow(db(), id)).desired).toBe('running');
    await s.app.ctx.machines.requestStop(db(), [id]);
  });

  it('a transaction that rolls back announces nothing', async () => {
    const id = await newMachine();
    woken.length = 0;
    const failed = transaction(db(), async (tx) => {
      await s.app.ctx.machines.requestStart(tx, [id]);
      throw new Error('the caller changed its mind');
    });
    await expect(failed).rejects.toThrow('the caller changed its mind');
    await s.app.ctx.machines.announced();
    expect(woken).toEqual([]);
    expect((await machineRow(db(), id)).desired).toBe('stopped');
  });

  it('outside a transaction the request is announced at once (its statement committed); inside one that cannot say when it commits it is refused', async () => {
    const id = await newMachine();
    woken.length = 0;
    await s.app.ctx.machines.requestStart(db(), [id]);
    await s.app.ctx.machines.announced();
    expect(woken).toEqual([true]);
    const plain = db().transaction((tx) => s.app.ctx.machines.requestStop(tx, [id]));
    await expect(plain).rejects.toThrow('afterCommit needs a transaction made by transaction()');
    expect((await machineRow(db(), id)).desired).toBe('running');
  });
});
