/**
 * The lxd machine provider, end to end: time from POST /v1/user/slot to the machine showing `online` on the dashboard
 * (GET /v1/user/wallet/balance), and to the desktop's greeting (RFB version) through the gateway as a tab gets it
 * (a ticket, then the gateway's WebSocket), for 1 machine and for 10 started together; Stop; memory per running
 * desktop. Baseline, measured in the same run (interleaved with the 1-machine runs): a bare `Xvnc` start (the
 * desktop's X and VNC server) with no product code, from spawning it to the first RFB handshake; the start times are
 * also printed as its multiple.
 * The server runs as `npm start` runs it, in its own process (bench/production-server.ts: every job running, the lxd
 * provider), on PGlite, or PostgreSQL with DATABASE_URL; the customers are written into its database before it
 * starts. Run as root (LXD is prepared as `npm start` prepares it); the baseline needs Xvnc on the host (Debian's
 * tigervnc-standalone-server).
 *
 *   sudo npx tsx bench/machines.ts [runs-of-1 (default 5)] [runs-of-10 (default 3)]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import type { Database } from '../server/src/db/client';
import { createLedger } from '../server/src/modules/ledger/service';
import { seedUser } from '../server/src/modules/courses/fixtures/seed';
import { seedMachine } from '../server/test/machines-fixtures';
import { vncHandshake } from '../server/test/machines-desktops';
import { askTicket, gatewayStream } from './classroom/students';
import { balanceEntry, poster, startSeededServer } from './production-server';
import { desktopMemory, instanceProcesses, printDesktopMemory } from './memory';
import { fmtMs, percentile, ratio } from './stats';
import { describeHost } from './host';

const RUNS_1 = Number(process.argv[2] ?? 5);
const RUNS_10 = Number(process.argv[3] ?? 3);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

function xLockPid(display: number): number | null {
  try {
    const pid = Number(readFileSync(`/tmp/.X${display}-lock`, 'latin1').replace(/\D/g, ''));
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function clearStaleX(display: number): void {
  const pid = xLockPid(display);
  if (pid !== null && alive(pid)) return;
  rmSync(`/tmp/.X${display}-lock`, { force: true });
  rmSync(`/tmp/.X11-unix/X${display}`, { force: true });
}

/** An X display with neither a live lock owner nor a socket, well away from the provider's (which start at 100). */
function freeDisplay(): number {
  for (let d = 700; d < 900; d++) {
    const owner = xLockPid(d);
    if ((owner === null || !alive(owner)) && !existsSync(`/tmp/.X11-unix/X${d}`) && !existsSync(`/tmp/.X${d}-lock`)) return d;
  }
  throw new Error('no free X display for the baseline');
}

async function end(child: ChildProcess): Promise<void> {
  if (!child.pid || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await gone;
  clearTimeout(timer);
}

/**
 * Baseline: a bare desktop start with no product code (no API, no jobs, no session script, no window manager):
 * spawn Xvnc, time until its port answers an RFB handshake; then kill it.
 * Runs as an unprivileged user (`nobody`), like the provider's desktops, but with no sandbox around it.
 */
async function bareDesktop(): Promise<number> {
  const display = freeDisplay();
  const port = await freePort();
  const opts = {
    stdio: 'ignore' as const,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8' },
    ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}),
  };
  const children: ChildProcess[] = [];
  let failed: Error | null = null;
  const run = (cmd: string, args: string[]) => {
    const c = spawn(cmd, args, opts);
    c.once('error', (e) => (failed = e));
    children.push(c);
    return c;
  };
  const t0 = performance.now();
  try {
    const vnc = run('Xvnc', [`:${display}`, '-geometry', '1280x800', '-depth', '24', '-nolisten', 'tcp', '-interface', '127.0.0.1',
      '-rfbport', String(port), '-SecurityTypes', 'None', '-AlwaysShared']);
    for (;;) {
      if (await vncHandshake(port, '127.0.0.1', 1000).then(() => true, () => false)) return performance.now() - t0;
      if (failed || vnc.exitCode !== null) throw failed ?? new Error(`Xvnc exited (${vnc.exitCode})`);
      if (performance.now() - t0 > 120_000) throw new Error('bare Xvnc did not answer in 120 s');
      await sleep(10);
    }
  } finally {
    for (const c of children.reverse()) await end(c);
    clearStaleX(display);
  }
}

/** Ten customers, each with a machine and 10 hours on it. */
async function seedCustomers(database: Database) {
  const db = database.db;
  const ledger = createLedger(db);
  return Promise.all(
    Array.from({ length: 10 }, async (_, i) => {
      const user = await seedUser(db, { name: `Bench customer ${i + 1}` });
      const id = await seedMachine(db, user.uid, `Bench desk ${i + 1}`);
      await ledger.credit(db, { machineId: id, minutes: 600, expiresAt: new Date(Date.now() + 86_400_000), key: `bench:${id}` });
      return { id, user };
    }),
  );
}

/** A ticket for the machine, then the gateway's WebSocket until the desktop's RFB greeting arrives. */
async function greeting(base: string, token: string, packId: string): Promise<void> {
  const { res, body } = await askTicket(base, token, packId);
  if (res.status !== 200 || !body.wsPath) throw new Error(`ticket: ${res.status} ${body.code}`);
  const stream = gatewayStream(base.replace(/^http/, 'ws') + body.wsPath);
  await new Promise<void>((resolve, reject) => {
    let got = 0;
    stream.on('data', (chunk: Buffer) => {
      got += chunk.length;
      if (got >= 12) resolve();
    });
    stream.on('error', reject);
  }).finally(() => stream.destroy());
}

async function main() {
  console.log(describeHost());
  const server = await startSeededServer('machines', seedCustomers);
  const { base, project } = server;
  const customers = server.seeded.map((c) => {
    const token = server.tokenFor(c.user);
    return { id: c.id, token, post: poster(base, token) };
  });
  type Customer = (typeof customers)[number];
  const slot = async (c: Customer, body: object) => (await c.post<{ status: string }>('/v1/user/slot', body)).status;
  const state = async (c: Customer) => (await balanceEntry(base, await c.token(), c.id))?.instanceStatus;

  /** POST start, then the moment the dashboard shows it online, then the desktop's greeting through the gateway. */
  async function startOne(c: Customer): Promise<{ online: number; greeted: number }> {
    const t0 = performance.now();
    const answer = await slot(c, { packId: c.id });
    if (answer !== 'WAIT') throw new Error(`expected WAIT, got ${answer}`);
    while ((await state(c)) !== 'online') {
      if (performance.now() - t0 > 120_000) throw new Error('machine did not come online in 120 s');
      await sleep(20);
    }
    const online = performance.now() - t0;
    await greeting(base, await c.token(), c.id);
    return { online, greeted: performance.now() - t0 };
  }

  async function stopAll(cs: Customer[]): Promise<number> {
    const t0 = performance.now();
    await Promise.all(cs.map((c) => slot(c, { packId: c.id, terminate: true })));
    while (instanceProcesses(project).length > 0 || (await Promise.all(cs.map(state))).some((s) => s !== 'offline')) {
      if (performance.now() - t0 > 120_000) throw new Error('desktops still running 120 s after stop');
      await sleep(20);
    }
    return performance.now() - t0;
  }

  const bare: number[] = [];
  const one: { online: number; greeted: number }[] = [];
  const ten: { online: number; greeted: number }[] = [];
  const stops1: number[] = [];
  const stops10: number[] = [];
  let memory: ReturnType<typeof desktopMemory> | null = null;
  try {
    for (let i = 0; i < RUNS_1; i++) {
      bare.push(await bareDesktop());
      one.push(await startOne(customers[0]!));
      stops1.push(await stopAll([customers[0]!]));
    }
    for (let i = 0; i < RUNS_10; i++) {
      ten.push(...(await Promise.all(customers.map(startOne))));
      await sleep(2000); // let the desktops settle before measuring memory
      if (!memory) memory = desktopMemory(project);
      stops10.push(await stopAll(customers));
    }
  } finally {
    await stopAll(customers).catch(() => undefined);
    await server.close();
  }

  const row = (label: string, xs: number[]) =>
    console.log(`${label.padEnd(52)} p50 ${fmtMs(percentile(xs, 50)).padStart(8)}   p95 ${fmtMs(percentile(xs, 95)).padStart(8)}   max ${fmtMs(Math.max(...xs)).padStart(8)}   n=${xs.length}`);
  console.log(`\nlxd machine provider (${server.databaseKind}), ${RUNS_1} runs of 1 machine, ${RUNS_10} runs of 10 together\n`);
  row('baseline: bare Xvnc → VNC handshake', bare);
  row('1 machine: POST /user/slot → online', one.map((r) => r.online));
  row('1 machine: POST /user/slot → greeting via gateway', one.map((r) => r.greeted));
  row('10 together: POST /user/slot → online', ten.map((r) => r.online));
  row('10 together: POST /user/slot → greeting via gateway', ten.map((r) => r.greeted));
  row('stop 1: POST terminate → processes gone, offline', stops1);
  row('stop 10: POST terminate → processes gone, offline', stops10);
  const bareP50 = percentile(bare, 50);
  console.log(`\nAgainst the bare desktop start (p50 ${fmtMs(bareP50)}, measured in this run):`);
  console.log(`${'1 machine: API start → greeting p50 / bare Xvnc p50'.padEnd(70)} ${ratio(percentile(one.map((r) => r.greeted), 50), bareP50)} the bare desktop start`);
  if (ten.length) {
    console.log(`${'10 together: API start → greeting p50 / bare Xvnc p50'.padEnd(70)} ${ratio(percentile(ten.map((r) => r.greeted), 50), bareP50)} the bare desktop start`);
  }
  if (memory) printDesktopMemory(memory);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
