import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { startServer, type RunningServer } from '../../e2e/harness';
import { openDatabase, type Database } from '../src/db/client';
import { createTokens } from '../src/modules/identity/tokens';
import { createLedger } from '../src/modules/ledger/service';
import { createLocalProvider } from '../src/modules/machines/providers/local';
import { systemClock } from '../src/lib/clock';
import { desktopProcesses, trustedUnixSocket, until, vncHandshake } from './machines-desktops';
import { machineRow, seedMachine, seedUser, signFor } from './machines-fixtures';

/**
 * kill -9 of the real server process (same entry point as `npm start`) in the middle of a start and of a stop;
 * the restarted server must converge without duplicate desktops, orphan processes or double debits.
 */
describe('reconciler survives kill -9 of the server', () => {
  let srv: RunningServer;
  let machineId = '';
  let token = '';
  let firstPostAt = 0;
  const statePath = () => path.join(srv.dataDir, 'machines', machineId, 'state.json');
  const readState = () => JSON.parse(readFileSync(statePath(), 'utf8')) as { supervisor: number };
  const vncSocket = () => ({ path: path.join(srv.dataDir, 'machines', machineId, 'run', 'vnc.sock') });
  const ours = () => desktopProcesses(srv.dataDir);

  /** Opens the server's database: PostgreSQL alongside the server; PGlite (one process) while it is stopped. */
  async function withDb<T>(fn: (database: Database) => Promise<T>): Promise<T> {
    const pg = srv.env.DATABASE_URL;
    if (!pg) await srv.stop();
    const database = await openDatabase(pg ? { databaseUrl: pg } : { dataDir: srv.dataDir });
    try {
      return await fn(database);
    } finally {
      await database.close();
    }
  }
  const slot = async (body: object) => {
    const res = await fetch(`${srv.base}/v1/user/slot`, { method: 'POST', headers: { idtoken: token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { status: string } };
  };

  beforeAll(async () => {
    srv = await startServer({ MACHINE_PROVIDER: 'local' }); // this file looks into the local provider's sandboxes
    await withDb(async (database) => {
      const u = await seedUser(database.db);
      machineId = await seedMachine(database.db, u.uid, 'Crash Test Desk');
      await createLedger(database.db).credit(database.db, { machineId, minutes: 120, expiresAt: new Date(Date.now() + 86_400_000), key: `t:${machineId}` });
      token = await signFor(await createTokens(database.db, systemClock), u);
    });
    if (srv.proc.exitCode !== null || srv.proc.signalCode !== null) await srv.restart();
  }, 120_000);

  afterAll(async () => {
    await srv.stop();
    const provider = createLocalProvider({ dataDir: srv.dataDir });
    for (const id of await provider.list()) await provider.destroy(id);
    expect(ours()).toEqual([]);
    await srv.close();
  }, 120_000);

  it('kill -9 while a desktop is starting: the restarted server adopts it (no second desktop) and brings it online', async () => {
    firstPostAt = Date.now();
    expect((await slot({ packId: machineId })).body.status).toBe('WAIT');
    // Spawned = recorded in state.json and its supervisor in the machine's cgroup (it joins right after the spawn).
    await until('desktop spawned', () => existsSync(statePath()) && ours().length > 0, 30_000, 5);
    await srv.stop('SIGKILL');
    const spawned = readState();
    expect(ours().length).toBeGreaterThan(0); // the desktop outlives the server
    await withDb(async (database) => expect((await machineRow(database.db, machineId)).observed).toBe('processing'));

    await srv.restart();
    await until('RUNNING', async () => (await slot({ packId: machineId })).body.status === 'RUNNING', 90_000, 200);
    const procs = ours();
    expect(procs.every((p) => p.machineId === machineId)).toBe(true);
    expect(procs.filter((p) => p.comm === 'Xvfb')).toHaveLength(1);
    expect(procs.filter((p) => p.comm === 'x11vnc')).toHaveLength(1);
    const now = readState();
    expect(now.supervisor).toBe(spawned.supervisor); // adopted, not started twice
    expect((await vncHandshake(trustedUnixSocket(vncSocket().path))).name).toBe('Crash Test Desk');
  }, 180_000);

  it('kill -9 right after a stop request: the restarted server ends the desktop, charges each minute once', async () => {
    await new Promise((r) => setTimeout(r, 11_000)); // let this server's metering pass charge the first minute
    const sock = vncSocket();
    expect((await slot({ packId: machineId, terminate: true })).body.status).toBe('STOPPED');
    await srv.stop('SIGKILL'); // within milliseconds of the answer: the stop is recorded, rarely carried out yet

    await srv.restart();
    await until('desktop gone', () => ours().length === 0, 60_000, 100);
    const endedAt = Date.now();
    // stop() removes the run dir (sockets) and the state file right after the processes are gone.
    await until('desktop cleaned up', () => !existsSync(statePath()) && !existsSync(sock.path), 10_000, 100);
    expect(existsSync(statePath())).toBe(false);
    await until('socket closed', async () => !(await vncHandshake(trustedUnixSocket(sock.path), '127.0.0.1', 500).then(() => true, () => false)), 10_000);

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
  }, 240_000);
});
