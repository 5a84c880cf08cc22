import { loadConfig } from './config';
import { openDatabase } from './db/client';
import { migrate } from './db/migrate';
import { buildApp } from './app';
import { startJobs } from './lib/jobs';

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
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.dataDir });
  const applied = await migrate(database);
  const app = await buildApp({ config, database });
  if (applied.length) app.log.info({ applied }, 'migrations applied');
  const jobs = startJobs(app.ctx.jobs, app.log);

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
      void database.close().finally(() => process.exit(1));
    }, DRAIN_MS);
    force.unref();
    await jobs.stop();
    await app.close();
    await database.close();
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
