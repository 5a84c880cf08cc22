import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../server/src/config';
import { buildApp } from '../server/src/app';
import { startJobs } from '../server/src/lib/jobs';
import { freshDatabase } from '../server/test/harness';
import { prepareLxd, removeProject } from '../server/test/lxd-fixtures';

/**
 * The production app (buildApp, every job running, the lxd provider) on a free loopback port with its own data:
 * PGlite, or a fresh database on DATABASE_URL's server; LXD prepared for its data dir as `npm start` prepares it
 * (run as root). close() stops the jobs, the app, drops the database, the deployment's project and the data dir.
 */
export async function startBenchServer(name: string) {
  const dataDir = mkdtempSync(path.join(tmpdir(), `hd-bench-${name}-`));
  const lxd = await prepareLxd(dataDir);
  const { database, drop } = await freshDatabase();
  const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', LXD_URL: lxd.LXD_URL } as NodeJS.ProcessEnv);
  const app = await buildApp({ config, database, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const jobs = startJobs(app.ctx.jobs, app.log);
  return {
    app,
    base,
    dataDir,
    /** The deployment's LXD project (its instances are hd-<machineId> in it). */
    project: config.lxdProject,
    db: app.ctx.db,
    databaseKind: database.kind,
    async close() {
      await jobs.stop();
      await app.close();
      await drop();
      removeProject(config.lxdProject);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
