import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../server/src/config';
import { buildApp } from '../server/src/app';
import { startJobs } from '../server/src/lib/jobs';
import { freshDatabase } from '../server/test/harness';

/**
 * The production app (buildApp, every job running) on a free loopback port with its own data: PGlite, or a fresh
 * database on DATABASE_URL's server. close() stops the jobs, the app, drops the database and the data dir.
 */
export async function startBenchServer(name: string) {
  const dataDir = mkdtempSync(path.join(tmpdir(), `hd-bench-${name}-`));
  const { database, drop } = await freshDatabase();
  const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', MACHINE_PROVIDER: 'local' } as NodeJS.ProcessEnv);
  const app = await buildApp({ config, database, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const jobs = startJobs(app.ctx.jobs, app.log);
  return {
    app,
    base,
    dataDir,
    db: app.ctx.db,
    databaseKind: database.kind,
    async close() {
      await jobs.stop();
      await app.close();
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
