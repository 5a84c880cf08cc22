import { spawn } from 'node:child_process';
import { chmodSync, chownSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import {
  DESKTOP_PATH,
  DESKTOP_SCRIPT,
  desktopUser,
  ensureReachable,
  ensureX11SocketDir,
  missingPrograms,
  type DesktopUser,
} from './desktop';
import { MARK_DATA_DIR, MARK_MACHINE, abandonedDesktopPids, alive, clearStaleX, machineOfProcess, procInfo, scanDesktops, signal, waitGone, xLockPid } from './procs';
import { rfbAnswers } from './rfb';
import type { Endpoint, MachineProvider, ObservedDesktop } from './types';

/** What DATA_DIR/machines/<id>/state.json records about a desktop, so a restarted server adopts it. */
interface DesktopState {
  display: number;
  port: number;
  /** The session script's pid, which leads the desktop's process group; null until it is spawned. */
  pgid: number | null;
  name: string;
  startedAt: string;
}

export interface LocalProviderOptions {
  dataDir: string;
  log?: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
  /** First X display number tried; displays in use (lock files in /tmp) are skipped. */
  firstDisplay?: number;
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const LOOPBACK = '127.0.0.1';
const X_READY_TIMEOUT_MS = 20_000;

/**
 * The embedded machine provider: each machine is a real desktop on this host (Xvfb + openbox + xterm + x11vnc on
 * 127.0.0.1), with its home in DATA_DIR/machines/<id>/home kept across stop and start. x11vnc runs without a
 * password because it only listens on loopback, where the server's authenticated gateway is its only client.
 */
export function createLocalProvider(opts: LocalProviderOptions): MachineProvider {
  const dataDir = path.resolve(opts.dataDir);
  const root = path.join(dataDir, 'machines');
  const firstDisplay = opts.firstDisplay ?? 100;
  const user: DesktopUser | null = desktopUser();
  const displays = new Set<number>(); // reserved by this process until the X server holds its lock file
  const ports = new Set<number>();
  const locks = new Map<string, Promise<unknown>>();
  let prepared = false;

  const dirOf = (id: string) => {
    if (!ID.test(id)) throw new Error(`invalid machine id ${JSON.stringify(id)}`);
    return path.join(root, id);
  };
  const statePath = (id: string) => path.join(dirOf(id), 'state.json');
  const homeOf = (id: string) => path.join(dirOf(id), 'home');

  function readState(id: string): DesktopState | null {
    try {
      return JSON.parse(readFileSync(statePath(id), 'utf8')) as DesktopState;
    } catch {
      return null;
    }
  }
  function writeState(id: string, s: DesktopState) {
    const tmp = `${statePath(id)}.tmp`;
    writeFileSync(tmp, JSON.stringify(s), { mode: 0o600 });
    renameSync(tmp, statePath(id));
  }

  /** One operation per machine at a time (start and stop of the same machine never interleave). */
  function serialized<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const prev = locks.get(id) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    locks.set(id, tail);
    void tail.then(() => locks.get(id) === tail && locks.delete(id));
    return next;
  }

  function prepare() {
    if (prepared) return;
    mkdirSync(root, { recursive: true, mode: 0o711 });
    if (user) {
      ensureReachable(dataDir, user);
      ensureX11SocketDir();
    }
    prepared = true;
  }

  /** The session leader is alive and really ours (pids are reused). */
  function leaderAlive(id: string, s: DesktopState | null): boolean {
    return !!s?.pgid && alive(s.pgid) && machineOfProcess(s.pgid, dataDir) === id;
  }

  function pickDisplay(): number {
    for (let d = firstDisplay; d < firstDisplay + 2000; d++) {
      if (displays.has(d)) continue;
      const owner = xLockPid(d);
      if (owner !== null && alive(owner)) continue;
      displays.add(d);
      return d;
    }
    throw new Error('no free X display');
  }

  async function pickPort(): Promise<number> {
    for (;;) {
      const port = await new Promise<number>((resolve, reject) => {
        const s = createServer();
        s.once('error', reject);
        s.listen(0, LOOPBACK, () => {
          const p = (s.address() as { port: number }).port;
          s.close(() => resolve(p));
        });
      });
      if (!ports.has(port)) {
        ports.add(port);
        return port;
      }
    }
  }

  function release(s: Pick<DesktopState, 'display' | 'port'>) {
    displays.delete(s.display);
    ports.delete(s.port);
  }

  /** Spawns the session script; resolves once its X server holds the display, or rejects with the reason. */
  async function launch(id: string, name: string): Promise<'ok' | 'display-taken'> {
    const display = pickDisplay();
    const port = await pickPort();
    const home = homeOf(id);
    // The machine folder is searchable but not listable; the home inside belongs to the desktop user alone.
    mkdirSync(dirOf(id), { recursive: true, mode: 0o711 });
    chmodSync(dirOf(id), 0o711);
    mkdirSync(home, { recursive: true, mode: 0o700 });
    if (user) chownSync(home, user.uid, user.gid);
    writeState(id, { display, port, pgid: null, name, startedAt: new Date().toISOString() });
    const logFd = openSync(path.join(dirOf(id), 'desktop.log'), 'w', 0o600);
    const child = spawn('bash', ['-c', DESKTOP_SCRIPT, 'hyperdesk-desktop', String(display), String(port), name], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      cwd: home,
      env: { PATH: DESKTOP_PATH, HOME: home, USER: user?.name ?? process.env.USER ?? 'user', LANG: 'C.UTF-8', TERM: 'xterm', [MARK_DATA_DIR]: dataDir, [MARK_MACHINE]: id },
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    });
    closeSync(logFd);
    let exitCode: number | null | undefined;
    child.once('exit', (code) => (exitCode = code));
    child.once('error', () => (exitCode = -1));
    child.unref();
    if (!child.pid) {
      release({ display, port });
      rmSync(statePath(id), { force: true });
      throw new Error('could not spawn the desktop session');
    }
    writeState(id, { display, port, pgid: child.pid, name, startedAt: new Date().toISOString() });
    const deadline = Date.now() + X_READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const owner = xLockPid(display);
      if (owner !== null && procInfo(owner)?.pgrp === child.pid) return 'ok';
      if (exitCode !== undefined) {
        await cleanup(id);
        const other = xLockPid(display);
        if (exitCode === 3 && other !== null && alive(other)) return 'display-taken';
        throw new Error(`the desktop session ended at start (exit ${exitCode}): ${logTail(id)}`);
      }
      await new Promise((r) => setTimeout(r, 30));
    }
    await cleanup(id);
    throw new Error('the X server did not come up in time');
  }

  function logTail(id: string): string {
    try {
      return readFileSync(path.join(dirOf(id), 'desktop.log'), 'utf8').trim().split('\n').slice(-3).join(' | ').slice(0, 300);
    } catch {
      return 'no log';
    }
  }

  /** Ends every process of the machine (group first, then anything carrying its marker) and frees display and port. */
  async function cleanup(id: string): Promise<void> {
    const s = readState(id);
    if (s?.pgid && machineOfProcess(s.pgid, dataDir) === id) signal(s.pgid, 'SIGTERM', true);
    let pids = scanDesktops(dataDir, id).get(id) ?? [];
    pids.forEach((p) => signal(p, 'SIGTERM'));
    pids = await waitGone(pids, 3000);
    if (pids.length) {
      opts.log?.warn({ machineId: id, pids }, 'desktop processes ignored SIGTERM; killing them');
      pids.forEach((p) => signal(p, 'SIGKILL'));
      await waitGone(pids, 3000);
    }
    const late = scanDesktops(dataDir, id).get(id) ?? [];
    late.forEach((p) => signal(p, 'SIGKILL'));
    await waitGone(late, 3000);
    if (s) {
      clearStaleX(s.display);
      release(s);
    }
    rmSync(statePath(id), { force: true });
  }

  return {
    kind: 'local',

    async preflight() {
      const missing = missingPrograms();
      return missing.length
        ? `Machines cannot start on this server: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not installed.`
        : null;
    },

    start: ({ machineId, name }) =>
      serialized(machineId, async () => {
        prepare();
        const s = readState(machineId);
        if (leaderAlive(machineId, s)) return; // running or coming up: adopt it
        await cleanup(machineId); // leftovers of a desktop that died or of a start a crash interrupted
        for (let attempt = 0; attempt < 5; attempt++) {
          if ((await launch(machineId, name)) === 'ok') return;
        }
        throw new Error('no free X display after 5 attempts');
      }),

    async describe(machineId): Promise<ObservedDesktop> {
      const s = readState(machineId);
      if (!s) return { state: 'stopped' };
      if (!leaderAlive(machineId, s)) return { state: 'stopped', reason: 'The desktop ended.' };
      const endpoint: Endpoint = { host: LOOPBACK, port: s.port };
      return { state: (await rfbAnswers(endpoint)) ? 'running' : 'starting', endpoint };
    },

    stop: (machineId) => serialized(machineId, () => cleanup(machineId)),

    destroy: (machineId) =>
      serialized(machineId, async () => {
        await cleanup(machineId);
        rmSync(dirOf(machineId), { recursive: true, force: true });
      }),

    async list() {
      const abandoned = abandonedDesktopPids();
      if (abandoned.length) {
        opts.log?.warn({ pids: abandoned }, 'ending desktops whose data dir was deleted');
        abandoned.forEach((p) => signal(p, 'SIGTERM'));
        (await waitGone(abandoned, 3000)).forEach((p) => signal(p, 'SIGKILL'));
      }
      return [...scanDesktops(dataDir).keys()];
    },
  };
}
