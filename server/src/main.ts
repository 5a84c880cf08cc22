import { loadConfig } from './config';
import { openDatabase } from './db/client';
import { migrate } from './db/migrate';
import { buildApp } from './app';
import { startJobs } from './lib/jobs';

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

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    // Drain for 8 s at most; then still close the database (bounded), so PGlite's files are left consistent.
    const force = setTimeout(() => {
      app.log.error({ signal }, 'shutdown did not finish in time; closing the database and exiting');
      const bounded = setTimeout(() => process.exit(1), 2_000);
      bounded.unref();
      void database.close().finally(() => process.exit(1));
    }, 8_000);
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
