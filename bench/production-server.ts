/**
 * The server as `npm start` runs it (scripts/run-server.sh: compiled, logging on, LXD prepared, node as the
 * unprivileged user), in its own process, on a fresh database that the bench seeded before the server started:
 * PGlite in the server's data dir (written here first, then handed over), or a new database on DATABASE_URL's
 * PostgreSQL. The deployment's signing key is made while seeding, as the server would make it on first use, so the
 * bench signs id tokens whenever it needs them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { openDatabase, type Database } from '../server/src/db/client';
import { migrate } from '../server/src/db/migrate';
import { lxdProjectFor } from '../server/src/config';
import { systemClock } from '../server/src/lib/clock';
import { createTokens, type Principal } from '../server/src/modules/identity/tokens';
import { freshDatabase } from '../server/test/harness';
import { removeProject } from '../server/test/lxd-fixtures';
import { freePort } from '../e2e/harness';
import { childEnv, ROOT, SERVER_COMMAND, startProcess } from './server-process';

const run = promisify(execFile);

export async function startSeededServer<T>(name: string, seed: (database: Database) => Promise<T>) {
  const dataDir = mkdtempSync(path.join(tmpdir(), `hd-bench-${name}-`));
  const fresh = process.env.DATABASE_URL ? await freshDatabase() : null;
  /** What the run made, gone: the database, the deployment's LXD project, the data dir. */
  const remove = async () => {
    await fresh?.drop();
    removeProject(lxdProjectFor(dataDir));
    rmSync(dataDir, { recursive: true, force: true });
  };
  let started: { seeded: T; tokens: Awaited<ReturnType<typeof createTokens>>; server: Awaited<ReturnType<typeof startProcess>>; base: string };
  try {
    const database = fresh?.database ?? (await openDatabase({ dataDir }));
    if (!fresh) await migrate(database);
    const seeded = await seed(database);
    const tokens = await createTokens(database.db, systemClock);
    if (!fresh) await database.close(); // the server takes the data dir
    await run(process.execPath, [path.join(ROOT, 'scripts/build-server.mjs')], { cwd: ROOT });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = await startProcess('server', SERVER_COMMAND, childEnv({ DATABASE_URL: fresh?.url, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: base }), port, '/readyz');
    started = { seeded, tokens, server, base };
  } catch (err) {
    await remove();
    throw err;
  }
  const { seeded, tokens, server, base } = started;
  return {
    base,
    pid: server.pid,
    log: server.log,
    /** The deployment's LXD project (its instances are hd-<machineId> in it). */
    project: lxdProjectFor(dataDir),
    seeded,
    sign: (p: Principal) => tokens.sign(p),
    /** A token for `p` kept for 10 of its 15 minutes, so a poll costs the server one signature check, not one each. */
    tokenFor(p: Principal): () => Promise<string> {
      let kept: { token: string; until: number } | null = null;
      return async () => {
        if (!kept || Date.now() > kept.until) kept = { token: await tokens.sign(p), until: Date.now() + 10 * 60_000 };
        return kept.token;
      };
    },
    databaseKind: fresh ? 'PostgreSQL' : 'PGlite',
    /** Stops the server, drops the database, the deployment's LXD project and the data dir. */
    async close() {
      await server.stop();
      await remove();
    },
  };
}

/** POSTs a JSON body to one of the server's routes with the caller's token; answers the JSON, throws on anything but 200. */
export function poster(base: string, token: () => Promise<string>) {
  return async <T = unknown>(route: string, body: object): Promise<T> => {
    const res = await fetch(`${base}${route}`, { method: 'POST', headers: { idtoken: await token(), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${route}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
}

interface BalanceEntry {
  packId: string;
  instanceStatus: string;
  seats?: { machineId: string; instanceStatus: string }[];
}

/** One balance entry (a machine or a course), as the dashboard reads it (GET /v1/user/wallet/balance). */
export async function balanceEntry(base: string, token: string, packId: string): Promise<BalanceEntry | undefined> {
  const res = await fetch(`${base}/v1/user/wallet/balance`, { headers: { idtoken: token } });
  if (res.status !== 200) throw new Error(`balance: ${res.status} ${await res.text()}`);
  const { balance } = (await res.json()) as { balance: BalanceEntry[] };
  return balance.find((e) => e.packId === packId);
}

/** A course's seats (machine id and state), as its instructor's dashboard reads them. */
export function courseSeats(base: string, token: () => Promise<string>) {
  return async (courseId: string): Promise<{ machineId: string; instanceStatus: string }[]> =>
    (await balanceEntry(base, await token(), courseId))?.seats ?? [];
}

/** A course's machines' states, as its instructor's dashboard reads them. */
export function courseStates(base: string, token: () => Promise<string>) {
  const seats = courseSeats(base, token);
  return async (courseId: string): Promise<string[]> => (await seats(courseId)).map((x) => x.instanceStatus);
}
