import { execFile, spawn } from 'node:child_process';
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { AGENT_SCRIPT } from '../../../lib/paths';
import { cgroupNames, machineCgroup, ulimitArgs, type Limits } from './cgroups';
import { desktopPreflight } from './desktop';
import { alive, killAll, pidsOfUids, processesOfUids, procInfo, sameProcess } from './procs';
import { ownedUnixSocket } from './endpoint';
import { rfbAnswers, vncListens } from './rfb';
import { agentArgs, desktopArgs, DESKTOP_PATH, EXIT_VNC_DIED, EXIT_X_DIED, EXIT_X_FAILED, EXIT_X_SLOW, SUPERVISOR_SCRIPT, xauthFile } from './sandbox';
import type { MachineProvider, ObservedDesktop } from './types';
import { perKeySerial } from './serial';
import { ensureUser, lookupUser, machineUsers, removeUser, userNameOf } from './users';

const run = promisify(execFile);

/** What DATA_DIR/machines/<id>/state.json records about a running sandbox, so a restarted server adopts it. */
interface SandboxState {
  user: string;
  uid: number;
  supervisor: number;
  /** The supervisor's start time (/proc stat), so a reused pid is never mistaken for it. */
  supervisorStart: number;
  homeKey: string;
  name: string;
  startedAt: string;
}

export interface LocalProviderOptions {
  dataDir: string;
  log?: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
  egress?: 'none' | 'internet';
  limits?: Partial<Limits & { diskMb: number }>;
  /** The streaming agent's program; default server/agent/agent.py of this checkout (started only if present). */
  agentScript?: string;
  /** How often describe() measures a home against MACHINE_DISK_MB (default 30 s). */
  diskCheckEveryMs?: number;
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Home keys: a machine id, or `course-<course id>-<user id>` (issue 11.4). */
const HOME_KEY = /^[A-Za-z0-9_-]{1,140}$/;
/** Generous: on a host starting a classroom of desktops at once, an X server can take many seconds. */
const X_READY_TIMEOUT_MS = 60_000;
const START_CPU_BOOST = 8;
/** A desktop whose VNC server answered once and then stays silent this long is hung. */
const HUNG_AFTER_MS = 30_000;
const DISK_CHECK_EVERY_MS = 30_000;

const EXIT_REASONS: Record<number, string> = {
  [EXIT_X_FAILED]: 'The X server of the desktop failed to start.',
  [EXIT_X_SLOW]: 'The X server of the desktop did not come up in time.',
  [EXIT_X_DIED]: 'The X server of the desktop ended, so the machine was stopped.',
  [EXIT_VNC_DIED]: 'The VNC server of the desktop ended, so the machine was stopped.',
};

/**
 * The embedded machine provider: each machine is a sandboxed desktop on this host. The desktop runs in bubblewrap
 * (own PID, IPC, UTS and network namespaces; the system read-only; of the data dir only its home and run dir) as
 * the machine's own Unix user, in its own cgroup (memory, processes, CPU). Its VNC server and the streaming
 * agent listen on Unix sockets in the run dir, which only that user and the server can open; x11vnc therefore
 * needs no password: the server's authenticated gateway is its only possible client.
 */
/** A sandbox that ended before its X server came up (a failed setup, worth one more try). */
class SandboxEndedAtStart extends Error {}
const START_ATTEMPTS = 3;

export function createLocalProvider(opts: LocalProviderOptions): MachineProvider {
  const dataDir = path.resolve(opts.dataDir);
  const root = path.join(dataDir, 'machines');
  const homes = path.join(dataDir, 'homes');
  const egress = opts.egress ?? 'internet';
  const limits: Limits = { memoryMb: opts.limits?.memoryMb ?? 4096, pids: opts.limits?.pids ?? 512, cpuShares: opts.limits?.cpuShares ?? 1024 };
  const diskMb = opts.limits?.diskMb ?? 20480;
  const agentScript = opts.agentScript ?? AGENT_SCRIPT;
  const serialized = perKeySerial();
  /** When a desktop's VNC server was first found silent (cleared whenever it answers). */
  const silentFrom = new Map<string, number>();
  /** Desktops seen up since they started (or were adopted): later looks wait for VNC's greeting. */
  const seenUp = new Set<string>();
  const lastDiskCheck = new Map<string, number>();
  let agentMissingLogged = false;
  const registryFile = path.join(dataDir, 'gstreamer', 'registry.bin');
  let registryBuilt = false;

  const valid = (id: string) => {
    if (!ID.test(id)) throw new Error(`invalid id ${JSON.stringify(id)}`);
    return id;
  };
  const dirOf = (id: string) => path.join(root, valid(id));
  const runOf = (id: string) => path.join(dirOf(id), 'run');
  const homeOf = (key: string) => {
    if (!HOME_KEY.test(key)) throw new Error(`invalid home key ${JSON.stringify(key)}`);
    return path.join(homes, key);
  };
  const file = (id: string, name: string) => path.join(dirOf(id), name);

  function readJson<T>(f: string): T | null {
    try {
      return JSON.parse(readFileSync(f, 'utf8')) as T;
    } catch {
      return null;
    }
  }
  const readState = (id: string) => readJson<SandboxState>(file(id, 'state.json'));
  function writeJson(f: string, v: unknown) {
    writeFileSync(`${f}.tmp`, JSON.stringify(v), { mode: 0o600 });
    renameSync(`${f}.tmp`, f);
  }
  const stoppedReason = (id: string) => readJson<{ reason: string }>(file(id, 'stopped.json'))?.reason;

  const supervisorAlive = (s: SandboxState | null) => !!s && sameProcess(s.supervisor, s.supervisorStart);

  /** Every process of the machine: its supervisor, everything in its cgroup, anything running as its user. */
  function machinePids(id: string, userName: string, s: SandboxState | null): number[] {
    const uid = lookupUser(userName)?.uid ?? s?.uid;
    const pids = new Set([...machineCgroup(userName).pids(), ...pidsOfUids(new Set(uid === undefined ? [] : [uid]))]);
    if (s && supervisorAlive(s)) pids.add(s.supervisor);
    return [...pids].filter(alive);
  }

  async function endProcesses(id: string, userName: string, s: SandboxState | null): Promise<void> {
    const cg = machineCgroup(userName);
    // The sandbox first (its supervisor and cgroup: cheap to read), then one /proc scan for anything that left it.
    await killAll(() => [...(s && supervisorAlive(s) ? [s.supervisor] : []), ...cg.pids()].filter(alive));
    const left = await killAll(() => machinePids(id, userName, s));
    if (left.length) opts.log?.warn({ machineId: id, pids: left }, 'machine processes survived SIGKILL');
    // Killed processes leave the cgroup once reaped.
    for (let i = 0; i < 100 && !cg.remove(); i++) await new Promise((r) => setTimeout(r, 20));
  }

  /** Ends every process of the machine and removes what a run leaves (run dir, state, cgroup). */
  async function cleanup(id: string): Promise<void> {
    const s = readState(id);
    await endProcesses(id, s?.user ?? userNameOf(dataDir, id), s);
    rmSync(runOf(id), { recursive: true, force: true });
    for (const f of ['state.json', 'info.json', 'exit']) rmSync(file(id, f), { force: true });
    silentFrom.delete(id);
    seenUp.delete(id);
  }

  function stopWithReason(id: string, reason: string): Promise<void> {
    return serialized(id, async () => {
      if (!readState(id)) return;
      opts.log?.warn({ machineId: id, reason }, 'stopping a machine');
      await cleanup(id);
      writeJson(file(id, 'stopped.json'), { reason });
    });
  }

  /** A fresh run dir (never reused: the user could have left symlinks in the old one) with a fresh X cookie. */
  function prepareRunDir(id: string, uid: number, gid: number) {
    const runDir = runOf(id);
    rmSync(runDir, { recursive: true, force: true });
    mkdirSync(path.join(runDir, 'x11'), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(runDir, 'xauth'), xauthFile(), { mode: 0o600 });
    for (const p of [runDir, path.join(runDir, 'x11'), path.join(runDir, 'xauth')]) chownSync(p, uid, gid);
    chmodSync(runDir, 0o700);
  }

  /** The home belongs to the machine's user (a seat's home may come from another machine, or an older uid). */
  async function prepareHome(key: string, uid: number, gid: number): Promise<string> {
    mkdirSync(homes, { recursive: true, mode: 0o700 });
    const home = homeOf(key);
    const created = mkdirSync(home, { recursive: true, mode: 0o700 }) !== undefined;
    const st = statSync(home);
    // A new, empty home needs no recursive walk (and no process spawned while a classroom starts).
    if (created) chownSync(home, uid, gid);
    else if (st.uid !== uid || st.gid !== gid) await run('chown', ['-R', '--no-dereference', `${uid}:${gid}`, home]);
    chmodSync(home, 0o700);
    return home;
  }

  function agentCommand(id: string, uid: number, gid: number): string[] {
    if (!existsSync(agentScript)) {
      if (!agentMissingLogged) opts.log?.warn({ agentScript }, 'no streaming agent installed; desktops are reachable over VNC only');
      agentMissingLogged = true;
      return [];
    }
    // Built at this process's first desktop start (not for every provider a CLI or a test creates).
    if (!registryBuilt) buildGstRegistry(registryFile, opts.log);
    registryBuilt = true;
    const gstRegistry = existsSync(registryFile) ? registryFile : undefined;
    return agentArgs({ run: runOf(id), uid, gid, agentDir: path.dirname(agentScript), agentFile: path.basename(agentScript), gstRegistry });
  }

  /** The sandbox's exit code as its supervisor recorded it, or null. */
  function exitCode(id: string): number | null {
    try {
      const code = Number(readFileSync(file(id, 'exit'), 'utf8').trim());
      return Number.isInteger(code) ? code : null;
    } catch {
      return null;
    }
  }

  function logTail(id: string): string {
    try {
      return readFileSync(file(id, 'desktop.log'), 'utf8').trim().split('\n').slice(-3).join(' | ').slice(0, 300);
    } catch {
      return 'no log';
    }
  }

  async function launch(id: string, name: string, homeKey: string): Promise<void> {
    const user = await ensureUser(dataDir, id);
    mkdirSync(dirOf(id), { recursive: true, mode: 0o700 });
    const home = await prepareHome(homeKey, user.uid, user.gid);
    prepareRunDir(id, user.uid, user.gid);
    for (const f of ['stopped.json', 'exit', 'info.json']) rmSync(file(id, f), { force: true });
    const cg = machineCgroup(user.name);
    // A starting desktop gets a larger CPU share until its VNC listens (the supervisor then sets the usual one):
    // when a classroom starts, the desktops already up start their programs, and would slow the rest's start.
    cg.create(limits, START_CPU_BOOST);
    const settle = cg.cpuSetting(limits.cpuShares);
    // Its home was just prepared: the first quota check (a `du`) waits for the usual interval, not the first look.
    lastDiskCheck.set(id, Date.now());
    const args = [
      ...desktopArgs({ home, run: runOf(id), uid: user.uid, gid: user.gid, user: user.name, name }),
      '@@agent@@',
      ...agentCommand(id, user.uid, user.gid),
    ];
    const logFd = openSync(file(id, 'desktop.log'), 'w', 0o600);
    const child = spawn('bash', ['-c', SUPERVISOR_SCRIPT, 'hyperdesk-supervisor', dirOf(id), egress, runOf(id), ...args], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: { PATH: DESKTOP_PATH, LANG: 'C.UTF-8', CGROUP_PROCS: cg.procsFiles.join(' '), ULIMITS: ulimitArgs(cg.kind, limits), CPU_SETTLE: settle ? `${settle.file} ${settle.value}` : '' },
    });
    closeSync(logFd);
    let exited = false;
    child.once('exit', () => (exited = true));
    child.once('error', () => (exited = true));
    child.unref();
    const start = child.pid ? procInfo(child.pid)?.start : undefined;
    if (!child.pid || start === undefined) throw new Error(`could not spawn the desktop sandbox: ${logTail(id)}`);
    writeJson(file(id, 'state.json'), { user: user.name, uid: user.uid, supervisor: child.pid, supervisorStart: start, homeKey, name, startedAt: new Date().toISOString() } satisfies SandboxState);
    const xSocket = path.join(runOf(id), 'x11', 'X0');
    const deadline = Date.now() + X_READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (existsSync(xSocket)) return;
      if (exited) {
        const code = exitCode(id);
        const log = logTail(id);
        await cleanup(id);
        throw new SandboxEndedAtStart(`the desktop sandbox ended at start (exit ${code ?? 'unknown'}): ${log}`);
      }
      await new Promise((r) => setTimeout(r, 30));
    }
    await cleanup(id);
    throw new Error('the X server did not come up in time');
  }

  /** The home folder's size against its quota, checked now and then (du over a big home is not free). */
  async function overDisk(id: string, s: SandboxState): Promise<boolean> {
    const now = Date.now();
    if (now - (lastDiskCheck.get(id) ?? 0) < (opts.diskCheckEveryMs ?? DISK_CHECK_EVERY_MS)) return false;
    lastDiskCheck.set(id, now);
    try {
      const { stdout } = await run('du', ['-skx', homeOf(s.homeKey)], { timeout: 20_000 });
      return Number(stdout.split('\t')[0]) > diskMb * 1024;
    } catch {
      return false;
    }
  }

  /** Users, cgroups and run dirs that no machine of this data dir accounts for (or of a deleted data dir). */
  async function sweep(): Promise<void> {
    const known = new Set<string>();
    for (const u of machineUsers()) {
      known.add(u.name);
      const ours = u.dataDir === dataDir;
      const orphan = ours ? !existsSync(dirOf(u.machineId)) : !existsSync(u.dataDir);
      if (!orphan) continue;
      opts.log?.warn({ user: u.name, machineId: u.machineId }, 'removing the sandbox of a machine that no longer exists');
      await endProcesses(u.machineId, u.name, null);
      await removeUser(u.name).catch((err: unknown) => opts.log?.warn({ err, user: u.name }, 'could not remove a machine user'));
    }
    for (const name of cgroupNames()) {
      if (!name.startsWith('hd-') || known.has(name) || lookupUser(name)) continue;
      const cg = machineCgroup(name);
      await killAll(() => cg.pids().filter(alive));
      cg.remove();
    }
  }

  return {
    kind: 'local',

    async preflight() {
      return desktopPreflight(egress);
    },

    start: ({ machineId, name, homeKey }) =>
      serialized(machineId, async () => {
        const s = readState(machineId);
        if (supervisorAlive(s)) return; // running or coming up: adopt it
        await cleanup(machineId); // leftovers of a desktop that died or of a start a crash interrupted
        // bubblewrap can fail to set up the sandbox's loopback under many parallel starts ("Failed RTM_NEWADDR"):
        // a sandbox that ends at once is started again, twice at most, before the start counts as failed.
        for (let attempt = 1; ; attempt++) {
          try {
            return await launch(machineId, name, homeKey ?? machineId);
          } catch (err) {
            if (attempt >= START_ATTEMPTS || !(err instanceof SandboxEndedAtStart)) throw err;
            opts.log?.warn({ machineId, attempt, err: err.message }, 'desktop sandbox ended at start; starting it again');
          }
        }
      }),

    async describe(machineId): Promise<ObservedDesktop> {
      const s = readState(machineId);
      if (!s) {
        const reason = stoppedReason(machineId);
        return reason ? { state: 'stopped', reason } : { state: 'stopped' };
      }
      if (!supervisorAlive(s)) {
        const code = exitCode(machineId);
        return { state: 'stopped', reason: (code !== null && EXIT_REASONS[code]) || 'The desktop ended.' };
      }
      if (machineCgroup(s.user).oomKills() > 0) {
        const reason = `The machine ran out of memory (limit ${limits.memoryMb} MB) and was stopped.`;
        await stopWithReason(machineId, reason);
        return { state: 'stopped', reason };
      }
      if (await overDisk(machineId, s)) {
        const reason = `The machine's home folder grew past its disk quota (${diskMb} MB) and the machine was stopped.`;
        await stopWithReason(machineId, reason);
        return { state: 'stopped', reason };
      }
      // The run dir is the tenant's: its sockets are opened only as the machine user's own socket files.
      const endpoint = ownedUnixSocket(path.join(runOf(machineId), 'vnc.sock'), s.uid);
      // The first look only needs VNC to listen (it greets on its next poll, a quarter second on): the machine is
      // online that much sooner. Every later look waits for the greeting, so a hung server is noticed.
      if (seenUp.has(machineId) ? await rfbAnswers(endpoint, 2000) : await vncListens(endpoint, 2000)) {
        seenUp.add(machineId);
        silentFrom.delete(machineId);
        const agent = path.join(runOf(machineId), 'agent.sock');
        return existsSync(agent) ? { state: 'running', endpoint, agent: ownedUnixSocket(agent, s.uid), answered: true } : { state: 'running', endpoint, answered: true };
      }
      // Silent since when (counted from the first silent look, once the socket exists: it answered or was adopted).
      const silentSince = silentFrom.get(machineId);
      if (silentSince === undefined && existsSync(String(endpoint.ref.path))) silentFrom.set(machineId, Date.now());
      if (silentSince !== undefined && Date.now() - silentSince > HUNG_AFTER_MS) {
        const reason = 'The desktop stopped responding, so the machine was stopped.';
        await stopWithReason(machineId, reason);
        return { state: 'stopped', reason };
      }
      return { state: 'starting', endpoint };
    },

    stop: (machineId) =>
      serialized(machineId, async () => {
        if (readState(machineId)) rmSync(file(machineId, 'stopped.json'), { force: true });
        await cleanup(machineId);
      }),

    destroy: (machineId) =>
      serialized(machineId, async () => {
        await cleanup(machineId);
        await removeUser(userNameOf(dataDir, machineId));
        machineCgroup(userNameOf(dataDir, machineId)).remove();
        rmSync(dirOf(machineId), { recursive: true, force: true });
        rmSync(homeOf(machineId), { recursive: true, force: true });
      }),

    // A sandbox's root is the host's, read-only: what a desktop changes outside its home lives in its run dir.
    reset: (machineId, { homeKey, eraseHome }) =>
      serialized(machineId, async () => {
        await cleanup(machineId);
        rmSync(dirOf(machineId), { recursive: true, force: true });
        if (eraseHome) rmSync(homeOf(homeKey), { recursive: true, force: true });
      }),

    async removeHome(homeKey) {
      rmSync(homeOf(homeKey), { recursive: true, force: true });
    },

    async list() {
      await sweep();
      const live: string[] = [];
      let ids: string[];
      try {
        ids = readdirSync(root).filter((d) => ID.test(d));
      } catch {
        return live;
      }
      // Live: a supervisor, anything in the machine's cgroup, or anything running as its user (one /proc scan).
      const uidOf = new Map<number, string>();
      for (const id of ids) {
        const s = readState(id);
        const name = s?.user ?? userNameOf(dataDir, id);
        if (supervisorAlive(s) || machineCgroup(name).pids().some(alive)) live.push(id);
        else {
          const uid = lookupUser(name)?.uid ?? s?.uid;
          if (uid !== undefined) uidOf.set(uid, id);
          if (!s) rmSync(runOf(id), { recursive: true, force: true });
        }
      }
      for (const uid of new Set(processesOfUids(new Set(uidOf.keys())).map((p) => p.uid))) live.push(uidOf.get(uid)!);
      return live;
    },
  };
}

/**
 * Builds GStreamer's plugin registry once per server process (so it follows package upgrades), for the streaming
 * agents to read. In the background: a desktop started before it is ready lets its agent scan for itself.
 */
function buildGstRegistry(file: string, log?: LocalProviderOptions['log']): void {
  const tmp = `${file}.${process.pid}.tmp`;
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
  chmodSync(path.dirname(file), 0o755);
  execFile('gst-inspect-1.0', ['coreelements'], { env: { PATH: DESKTOP_PATH, GST_REGISTRY: tmp }, timeout: 60_000 }, (err) => {
    try {
      if (err) throw err;
      chmodSync(tmp, 0o644);
      renameSync(tmp, file);
    } catch (e) {
      rmSync(tmp, { force: true });
      log?.warn({ err: (e as Error).message }, 'no shared GStreamer registry; each streaming agent scans the plugins itself');
    }
  });
}
