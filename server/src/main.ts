import { loadConfig } from './config';
import { openDatabase } from './db/client';
import { migrate } from './db/migrate';
import { buildApp } from './app';
import { startJobs } from './lib/jobs';
import { acquire, describeHolder, type HeldLock } from './lib/datadir-lock';
import { startAdminEndpoint, type AdminEndpoint } from './cli/admin-endpoint';

/** How long a starting server waits for an admin command holding the embedded database to finish. */
const CLI_LOCK_WAIT_MS = 60_000;

/** Embedded database: take DATA_DIR's lock first (PGlite is single-process); wait for a CLI, refuse beside a server. */
async function lockDataDir(dataDir: string): Promise<HeldLock> {
  const r = await acquire(dataDir, 'server', {
    waitMs: CLI_LOCK_WAIT_MS,
    stopWaiting: (h) => h.role === 'server',
    onWait: (h) => console.error(`${dataDir} is in use by ${describeHolder(h)}; waiting up to ${CLI_LOCK_WAIT_MS / 1000} s for it to finish...`),
  });
  if (r.ok) return r.lock;
  const h = r.holder;
  console.error(
    h.role === 'server'
      ? `Refusing to start: ${describeHolder(h)} already uses ${dataDir} (its embedded database allows one process). Stop it first, or give this one another DATA_DIR.`
      : `Refusing to start: ${describeHolder(h)} still holds ${dataDir}. Start the server again once it has finished.`,
  );
  process.exit(1);
}

/** Shutdown budget: 7 s to drain, then at most 2 s to close the database; 10 s is the promise (issue 14). */
const DRAIN_MS = 7_000;
const CLOSE_DB_MS = 2_000;

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
  const lock = config.DATABASE_URL ? undefined : await lockDataDir(config.dataDir);
  process.on('exit', () => lock?.release()); // also after a failed start; a killed server leaves a stale lock
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.dataDir });
  const applied = await migrate(database);
  const app = await buildApp({ config, database });
  if (applied.length) app.log.info({ applied }, 'migrations applied');
  const jobs = startJobs(app.ctx.jobs, app.log);
  // `npm run admin` finds this endpoint through the lock file and runs its commands here, never beside us.
  let adminEndpoint: AdminEndpoint | undefined;
  if (lock) {
    adminEndpoint = await startAdminEndpoint({ dataDir: config.dataDir, database, log: app.log, mailer: app.ctx.mailer });
    lock.update({ adminPort: adminEndpoint.port });
  }

  // SIGTERM drains: jobs stop, the server stops accepting and finishes requests in flight, the database closes.
  // Whatever happens, the process ends within 10 s: after DRAIN_MS the database still gets a bounded close (so
  // PGlite's files are left consistent), then exit. Logging never blocks (lib/log-stream), so these timers fire.
  // Repeated signals change nothing (`npm start` in a terminal delivers Ctrl-C twice: from the tty and from npm).
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error({ signal }, 'shutdown did not finish in time; closing the database and exiting');
      const bounded = setTimeout(() => process.exit(1), CLOSE_DB_MS);
      bounded.unref();
      void database.close().finally(() => {
        lock?.release();
        process.exit(1);
      });
    }, DRAIN_MS);
    force.unref();
    await adminEndpoint?.close();
    await jobs.stop();
    await app.close();
    await database.close();
    lock?.release();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  await app.listen({ port: config.PORT, host: config.HOST });
  const where = config.DATABASE_URL ? 'PostgreSQL' : `PGlite in ${config.dataDir}`;
  console.log(`Hyperdesk is up at ${config.publicUrl} (database: ${where})`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
