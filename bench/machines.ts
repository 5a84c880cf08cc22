/**
 * The lxd machine provider, end to end: time from POST /v1/user/slot to the desktop answering a VNC handshake
 * (and to the machine showing `online`), for 1 machine and for 10 started together; memory per running desktop.
 * Baseline, measured in the same run (interleaved with the 1-machine runs): a bare `Xvnc` start (the desktop's X and
 * VNC server) with no product code, from spawning it to the first RFB handshake; the handshake times are also printed
 * as its multiple.
 * The server is built with the production buildApp and runs all its jobs; PGlite, or PostgreSQL with DATABASE_URL.
 * Run as root (LXD is prepared as `npm start` prepares it); the baseline needs Xvnc on the host (Debian's
 * tigervnc-standalone-server).
 *
 *   npx tsx bench/machines.ts [runs-of-1 (default 5)] [runs-of-10 (default 3)]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { startBenchServer } from './server';
import { vncHandshake } from '../server/test/machines-desktops';
import { machineRow, seedMachine, seedUser, signFor } from '../server/test/machines-fixtures';
import { desktopMemory, instanceProcesses, printDesktopMemory } from './memory';
import { fmtMs, percentile, ratio } from './stats';

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

async function main() {
  const server = await startBenchServer('machines');
  const { app, base, project, db } = server;

  const customers = await Promise.all(
    Array.from({ length: 10 }, async (_, i) => {
      const u = await seedUser(db);
      const id = await seedMachine(db, u.uid, `Bench desk ${i + 1}`);
      await app.ctx.ledger.credit(db, { machineId: id, minutes: 600, expiresAt: new Date(Date.now() + 86_400_000), key: `bench:${id}` });
      return { id, token: await signFor(app.ctx.tokens, u) };
    }),
  );
  const slot = (c: (typeof customers)[number], body: object) =>
    fetch(`${base}/v1/user/slot`, { method: 'POST', headers: { idtoken: c.token, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      (r) => r.json() as Promise<{ status: string }>,
    );

  /** POST start, then the first successful VNC handshake and the moment the machine is online. */
  async function startOne(c: (typeof customers)[number]): Promise<{ vnc: number; online: number }> {
    const t0 = performance.now();
    const answer = await slot(c, { packId: c.id });
    if (answer.status !== 'WAIT') throw new Error(`expected WAIT, got ${answer.status}`);
    let vnc = 0;
    for (;;) {
      const endpoint = vnc ? undefined : (await app.ctx.machines.provider.describe(c.id)).endpoint;
      if (endpoint && (await vncHandshake(endpoint, '127.0.0.1', 1000).then(() => true, () => false))) vnc = performance.now() - t0;
      if (vnc && (await machineRow(db, c.id)).observed === 'online') return { vnc, online: performance.now() - t0 };
      if (performance.now() - t0 > 120_000) throw new Error('machine did not come up in 120 s');
      await sleep(vnc ? 20 : 10);
    }
  }

  async function stopAll(cs: typeof customers): Promise<number> {
    const t0 = performance.now();
    await Promise.all(cs.map((c) => slot(c, { packId: c.id, terminate: true })));
    while (instanceProcesses(project).length > 0 || (await Promise.all(cs.map((c) => machineRow(db, c.id)))).some((r) => r.observed !== 'offline')) {
      await sleep(20);
    }
    return performance.now() - t0;
  }

  const bare: number[] = [];
  const one: { vnc: number; online: number }[] = [];
  const ten: { vnc: number; online: number }[] = [];
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
    console.log(`${label.padEnd(50)} p50 ${fmtMs(percentile(xs, 50)).padStart(8)}   p95 ${fmtMs(percentile(xs, 95)).padStart(8)}   max ${fmtMs(Math.max(...xs)).padStart(8)}   n=${xs.length}`);
  console.log(`\nlxd machine provider (${server.databaseKind}), ${RUNS_1} runs of 1 machine, ${RUNS_10} runs of 10 together\n`);
  row('baseline: bare Xvnc → VNC handshake', bare);
  row('1 machine: POST /user/slot → VNC handshake', one.map((r) => r.vnc));
  row('1 machine: POST /user/slot → online', one.map((r) => r.online));
  row('10 together: POST /user/slot → VNC handshake', ten.map((r) => r.vnc));
  row('10 together: POST /user/slot → online', ten.map((r) => r.online));
  row('stop 1: POST terminate → processes gone, offline', stops1);
  row('stop 10: POST terminate → processes gone, offline', stops10);
  const bareP50 = percentile(bare, 50);
  console.log(`\nAgainst the bare desktop start (p50 ${fmtMs(bareP50)}, measured in this run):`);
  console.log(`${'1 machine: API start → VNC handshake p50 / bare Xvnc p50'.padEnd(70)} ${ratio(percentile(one.map((r) => r.vnc), 50), bareP50)} the bare desktop start`);
  if (ten.length) {
    console.log(`${'10 together: API start → VNC handshake p50 / bare Xvnc p50'.padEnd(70)} ${ratio(percentile(ten.map((r) => r.vnc), 50), bareP50)} the bare desktop start`);
  }
  if (memory) printDesktopMemory(memory);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
