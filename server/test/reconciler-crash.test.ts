import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { startServer, type RunningServer } from '../../e2e/harness';
import { lxdProjectFor } from '../src/config';
import { openDatabase, type Database } from '../src/db/client';
import { createTokens } from '../src/modules/identity/tokens';
import { createLedger } from '../src/modules/ledger/service';
import { systemClock } from '../src/lib/clock';
import { until } from './machines-desktops';
import { machineRow, seedMachine, seedUser, signFor } from './machines-fixtures';

/**
 * kill -9 of the real server process (`npm start`'s scripts/run-server.sh: the lxd provider, unprivileged) in the
 * middle of a start and of a stop; the restarted server must converge with one instance per machine, nothing left
 * running, and each metered minute charged once.
 */
describe('reconciler survives kill -9 of the server', () => {
  let srv: RunningServer;
  let machineId = '';
  let token = '';
  let firstPostAt = 0;
  const lxc = (args: string[]) => execFileSync('lxc', [...args, '--project', lxdProjectFor(path.resolve(srv.dataDir))], { encoding: 'utf8' });
  /** The deployment's instances as name,status lines. */
  const instances = () => lxc(['list', '--format', 'csv', '-c', 'ns']).trim().split('\n').filter(Boolean);
  /** The instance's init, as the host sees it: a start that was carried out twice would show another. */
  const initPid = () => /^PID: (\d+)$/m.exec(lxc(['info', `hd-${machineId}`]))?.[1];

  /**
   * Opens the server's database: PostgreSQL alongside the server; PGlite (one process) while it is stopped, then
   * gives the files back to the server's unprivileged user (this test runs as root).
   */
  async function withDb<T>(fn: (database: Database) => Promise<T>): Promise<T> {
    const pg = srv.env.DATABASE_URL;
    if (!pg) await srv.stop();
    const database = await openDatabase(pg ? { databaseUrl: pg } : { dataDir: srv.dataDir });
    try {
      return await fn(database);
    } finally {
      await database.close();
      if (!pg) execFileSync('chown', ['-R', `${process.env.HYPERDESK_USER ?? 'hyperdesk'}:`, srv.dataDir]);
    }
  }
  const slot = async (body: object) => {
    const res = await fetch(`${srv.base}/v1/user/slot`, { method: 'POST', headers: { idtoken: token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { status: string } };
  };

  beforeAll(async () => {
    srv = await startServer();
    await withDb(async (database) => {
      const u = await seedUser(database.db);
      machineId = await seedMachine(database.db, u.uid, 'Crash Test Desk');
      await createLedger(database.db).credit(database.db, { machineId, minutes: 120, expiresAt: new Date(Date.now() + 86_400_000), key: `t:${machineId}` });
      token = await signFor(await createTokens(database.db, systemClock), u);
    });
    if (srv.proc.exitCode !== null || srv.proc.signalCode !== null) await srv.restart();
  }, 600_000);

  afterAll(async () => {
    await srv?.close(); // removes the deployment's project with its instances
  }, 120_000);

  it('kill -9 while a desktop is starting: the restarted server adopts it (no second desktop) and brings it online', async () => {
    firstPostAt = Date.now();
    expect((await slot({ packId: machineId })).body.status).toBe('WAIT');
    // The start reached the engine: the instance is running (its desktop still coming up).
    await until('instance running', () => instances().includes(`hd-${machineId},RUNNING`), 120_000, 200);
    await srv.stop('SIGKILL');
    const spawned = initPid();
    expect(spawned).toBeDefined(); // the desktop outlives the server
    await withDb(async (database) => expect((await machineRow(database.db, machineId)).observed).toBe('processing'));

    await srv.restart();
    await until('RUNNING', async () => (await slot({ packId: machineId })).body.status === 'RUNNING', 120_000, 200);
    expect(instances()).toEqual([`hd-${machineId},RUNNING`]);
    expect(initPid()).toBe(spawned); // adopted, not started twice
  }, 300_000);

  it('kill -9 right after a stop request: the restarted server ends the desktop, charges each minute once', async () => {
    await new Promise((r) => setTimeout(r, 11_000)); // let this server's metering pass charge the first minute
    expect((await slot({ packId: machineId, terminate: true })).body.status).toBe('STOPPED');
    await srv.stop('SIGKILL'); // within milliseconds of the answer: the stop is recorded, rarely carried out yet

    await srv.restart();
    await until('instance stopped', () => instances().join() === `hd-${machineId},STOPPED`, 120_000, 100);
    const endedAt = Date.now();

    await srv.stop(); // graceful: a pass in flight finishes its database writes first
    await withDb(async (database) => {
      expect(await machineRow(database.db, machineId)).toMatchObject({ desired: 'stopped', observed: 'offline', onlineSince: null });
      const res = await database.db.execute(
        sql`select idempotency_key as k, minutes from ledger_entries where machine_id = ${machineId} and kind = 'debit' order by idempotency_key`,
      );
      const rows = res.rows as { k: string; minutes: number }[];
      const minutes = rows.map((r) => Number(r.k.split(':')[2]));
      // Minutes are counted from online_since: a session shorter than the whole test has at most this many.
      const most = Math.floor((endedAt - firstPostAt) / 60_000) + 1;
      expect(rows.length).toBeGreaterThanOrEqual(1);
      expect(rows.length).toBeLessThanOrEqual(most);
      expect(rows.every((r) => r.k.startsWith(`meter:${machineId}:`) && Number(r.minutes) === -1)).toBe(true);
      expect(minutes).toEqual(minutes.map((_, i) => minutes[0]! + i)); // contiguous, each once
      expect(await createLedger(database.db).remainingMinutes(database.db, machineId, new Date())).toBe(120 - rows.length);
    });
  }, 300_000);
});
