import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { chromium, type Browser, type Download, type Page } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ARTIFACTS = path.join(ROOT, 'test-results');
/**
 * How `npm start` (scripts/start.sh) runs the server: scripts/run-server.sh, which (as root, with the lxd provider)
 * prepares LXD for the data dir's deployment and execs the compiled bundle under plain node as the unprivileged
 * user hyperdesk (the same pid: signals reach node).
 */
export const SERVER_COMMAND = ['sh', path.join(ROOT, 'scripts/run-server.sh')] as const;

let built: Promise<unknown> | undefined;
/** Builds server/dist from the current sources once per test process (scripts/build-server.mjs, as npm start does). */
export function buildServerOnce(): Promise<unknown> {
  built ??= promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts/build-server.mjs')], { cwd: ROOT });
  return built;
}

/**
 * The command line of a compiled bundle under plain node, built first if this process has not: `admin` as `npm run
 * admin -- ARGS` runs it (what an operator runs, and a third of the CPU the TypeScript sources under tsx take to start:
 * 0.37 against 1.1 CPU-s), `main` as run-server.sh starts the server, for a test that runs it itself.
 */
export async function bundleCommand(bundle: 'admin' | 'main', args: string[] = []): Promise<[string, string[]]> {
  await buildServerOnce();
  return [process.execPath, ['--enable-source-maps', path.join(ROOT, `server/dist/${bundle}.js`), ...args]];
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // WebRTC between the browser and a desktop on this same host.
  '--allow-loopback-in-peer-connection',
];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export interface RunningServer {
  base: string;
  dataDir: string;
  env: Record<string, string>;
  proc: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Servers started in this file and not closed yet (a start that outlived its hook's timeout included). */
const started = new Set<RunningServer>();

/**
 * Closes what the file's own afterAll could not: a server whose start outlived the hook's timeout (the test never got
 * it) or that a failed test left. Run after each file (e2e/setup.ts), so no server, desktop or database outlives it.
 */
export async function closeAllServers(): Promise<void> {
  for (const s of [...started]) await s.close().catch(() => undefined);
}

/** The last lines each running server wrote (warnings and errors at the default LOG_LEVEL): printed when a test fails. */
export function serversTail(lines = 80): string {
  return [...started].map((s) => `--- server ${s.base} (${s.dataDir}), its last ${lines} lines:\n${s.output().split('\n').slice(-lines).join('\n')}`).join('\n');
}

/**
 * Starts the real server (same entry point as `npm start`, serving the built web app) on a free port with its own
 * data: a fresh PGlite directory, or a fresh database on DATABASE_URL's server. With `readStdout: false` its stdout is
 * a pipe nobody reads (output() then holds stderr only). `sharedDatabaseUrl` runs it on a database the caller made
 * (and drops): several replicas on one PostgreSQL, each with its own DATA_DIR and port.
 */
export async function startServer(
  extraEnv: Record<string, string> = {},
  opts: { readStdout?: boolean; sharedDatabaseUrl?: string } = {},
): Promise<RunningServer> {
  await buildServerOnce();
  const port = await freePort();
  // The deployment's data dir (its LXD project is named after it): the caller's, or a new one.
  const dataDir = extraEnv.DATA_DIR ? path.resolve(extraEnv.DATA_DIR) : mkdtempSync(path.join(tmpdir(), 'hd-e2e-'));
  let dbName: string | undefined;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  delete env.DATABASE_URL;
  if (opts.sharedDatabaseUrl) env.DATABASE_URL = opts.sharedDatabaseUrl;
  else if (process.env.DATABASE_URL) {
    dbName = `hd_e2e_${randomBytes(5).toString('hex')}`;
    const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await c.connect();
    await c.query(`create database ${dbName}`);
    await c.end();
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = `/${dbName}`;
    env.DATABASE_URL = u.toString();
  }
  let out = '';
  const server: RunningServer = {
    base: `http://127.0.0.1:${port}`,
    dataDir,
    env,
    proc: undefined as unknown as ChildProcess,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      const p = server.proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        p.once('exit', () => resolve());
        p.kill(signal);
      });
    },
    async restart() {
      await server.stop();
      await launch();
    },
    async close() {
      if (!started.delete(server)) return; // closed already
      await server.stop();
      // Desktops outlive the server on purpose (a restart adopts them); a finished test ends its own.
      await removeDesktops(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
      if (dbName) {
        const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await c.connect();
        await c.query(`drop database if exists ${dbName} with (force)`);
        await c.end();
      }
    },
  };
  const launch = async () => {
    const [node, ...args] = SERVER_COMMAND;
    server.proc = spawn(node, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (opts.readStdout !== false) server.proc.stdout!.on('data', (d) => (out += d));
    server.proc.stderr!.on('data', (d) => (out += d));
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      if (server.proc.exitCode !== null) throw new Error(`server exited:\n${out}`);
      try {
        if ((await fetch(`${server.base}/readyz`)).ok) return;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    server.proc.kill('SIGKILL');
    throw new Error(`server did not become ready:\n${out}`);
  };
  started.add(server);
  await launch();
  return server;
}

/**
 * `npm run admin -- ARGS` beside a running server, with its configuration (on PGlite the CLI runs the command inside
 * that server, found through DATA_DIR): resolves with what it printed.
 */
export async function operatorCli(server: RunningServer, ...args: string[]): Promise<string> {
  const [node, argv] = await bundleCommand('admin', args);
  const { stdout } = await promisify(execFile)(node, argv, { cwd: ROOT, env: server.env });
  return stdout;
}

/** Ends and removes every desktop of a data dir's deployment: its LXD project with its instances and volumes. */
export async function removeDesktops(dataDir: string): Promise<void> {
  const { lxdProjectFor } = await import('../server/src/config');
  const { removeProject } = await import('../server/test/lxd-fixtures');
  removeProject(lxdProjectFor(path.resolve(dataDir)));
}

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The environment variable naming the run's shared browser (e2e/global-setup.ts). */
export const BROWSER_ENDPOINT = 'HD_BROWSER_ENDPOINT';

/**
 * A browser for one test file: the run's shared Chromium when there is one (its contexts are the file's own, and
 * `close()` closes them and disconnects), else one of its own (a bench, or a file run outside the suite's set-up).
 */
export async function launchBrowser(): Promise<Browser> {
  const shared = process.env[BROWSER_ENDPOINT];
  if (shared) return chromium.connect(shared);
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/**
 * A download's bytes. Saved through the connection (`saveAs`): the run's shared browser is another process, whose
 * `download.path()` this one cannot read.
 */
export async function downloadedBytes(download: Download): Promise<Buffer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hd-download-'));
  try {
    const file = path.join(dir, 'download');
    await download.saveAs(file);
    return readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Saves a screenshot under test-results/ for people to look at. */
export async function snap(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}@example.com`;
}
