import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inOwnNamespaces } from './lxd-cluster-fixtures';
import { until } from './machines-desktops';

const run = promisify(execFile);
const DAEMON_SH = path.join(import.meta.dirname, '../../scripts/lxd/daemon.sh');
/** A network namespace of its own, so the test's daemon never sees the host's interfaces or firewall. */
const NS = 'hdd-test';

/**
 * scripts/lxd/daemon.sh, which npm start's host set-up runs, on a NEW LXD daemon of its own directory (in its own
 * network and mount namespaces; the host's daemon is not touched): it starts a daemon, starts it again after it died
 * while a process named lxd (what every running instance's monitor is called) stays, replaces one that hangs, and,
 * after every process died, starts it without the engine killing the process that now has its dead dnsmasq's pid.
 */
describe('the LXD daemon script', () => {
  let root: string;
  let dir: string;
  let log: string;
  let bystander: ChildProcess | undefined;
  const cmd = () => `lxd --group lxd --logfile=${log}`;
  const env = () => ({ ...process.env, LXD_DIR: dir, LXD_LOG: log, LXD_HUNG_AFTER: '3' });
  /** The pids pgrep finds with these arguments (none: pgrep's failure). */
  const pgrep = (args: string[]) => {
    try {
      return execFileSync('pgrep', args, { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const daemonPids = () => pgrep(['-x', '-f', '--', cmd()]);
  const answers = async () => {
    try {
      await run('lxc', ['query', '/1.0'], { env: env(), timeout: 10_000 });
      return true;
    } catch {
      return false;
    }
  };
  /** daemon.sh as host-setup.sh runs it, in the test's namespaces (its daemon keeps them). */
  const daemonSh = async () => {
    try {
      return (await run('nsenter', inOwnNamespaces(NS, root, `sh ${DAEMON_SH}`), { env: env(), timeout: 240_000 })).stdout;
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`daemon.sh failed:\n${e.stdout}\n${e.stderr}`, { cause: err });
    }
  };
  /** The test network's dnsmasq (its daemon's helper, which outlives the daemon). */
  const dnsmasqPids = () => pgrep(['-f', '--', `--dhcp-leasefile=${dir}/networks/`]);
  const killDaemon = (signal: NodeJS.Signals) => {
    for (const p of daemonPids()) process.kill(p, signal);
  };

  beforeAll(() => {
    execFileSync('sh', ['-c', `ip netns del ${NS} 2>/dev/null; ip netns add ${NS} && ip -n ${NS} link set lo up`]);
    root = mkdtempSync('/var/tmp/hdd-test-');
    chmodSync(root, 0o711);
    dir = path.join(root, 'lxd');
    log = path.join(root, 'lxd.log');
  });
  afterAll(async () => {
    bystander?.kill('SIGKILL');
    killDaemon('SIGKILL');
    for (const p of dnsmasqPids()) process.kill(p, 'SIGKILL');
    for (let i = 0; i < 50 && daemonPids().length; i++) await new Promise((r) => setTimeout(r, 100));
    execFileSync('sh', ['-c', `ip netns del ${NS} 2>/dev/null || true`]);
    rmSync(root, { recursive: true, force: true });
  });

  it('starts the daemon where none runs', async () => {
    expect(await answers()).toBe(false);
    expect(await daemonSh()).toContain('LXD: starting the LXD daemon');
    expect(await answers()).toBe(true);
    expect(daemonPids()).toHaveLength(1);
    expect(await daemonSh()).toBe(''); // one that answers is left alone
  }, 300_000);

  it('starts it again after it died, though a process named lxd (an instance monitor) still runs', async () => {
    // A running instance's monitor is a process named lxd: a stand-in with that name.
    mkdirSync(path.join(root, 'bin'));
    symlinkSync('/bin/sleep', path.join(root, 'bin', 'lxd'));
    bystander = spawn(path.join(root, 'bin', 'lxd'), ['600'], { stdio: 'ignore' });
    await new Promise((r) => bystander!.once('spawn', r));
    expect(execFileSync('pgrep', ['-x', 'lxd'], { encoding: 'utf8' })).toContain(String(bystander.pid));
    killDaemon('SIGKILL');
    for (let i = 0; i < 50 && daemonPids().length; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await answers()).toBe(false);
    const out = await daemonSh();
    expect(out).toContain('the LXD daemon had stopped; its log ended with:');
    expect(out).toContain('LXD: starting the LXD daemon');
    expect(await answers()).toBe(true);
    expect(bystander.exitCode).toBeNull(); // the monitor stand-in was not touched
  }, 300_000);

  it('replaces a daemon that runs but no longer answers', async () => {
    const [hung] = daemonPids();
    process.kill(hung!, 'SIGSTOP');
    expect(await answers()).toBe(false);
    expect(await daemonSh()).toContain('the LXD daemon runs but does not answer: replacing it');
    expect(await answers()).toBe(true);
    expect(daemonPids()).not.toContain(hung);
  }, 300_000);

  it("a host whose processes all died: the daemon started again kills no process that now has its dead dnsmasq's pid", async () => {
    await run('lxc', ['network', 'create', 'hdd0', 'ipv4.address=10.249.7.1/24', 'ipv4.nat=false', 'ipv4.firewall=false', 'ipv6.address=none'], { env: env() });
    const pidFile = path.join(dir, 'networks', 'hdd0', 'dnsmasq.pid');
    const recorded = () => Number(/^pid: (\d+)$/m.exec(readFileSync(pidFile, 'utf8'))?.[1]);
    await until('its dnsmasq', () => dnsmasqPids().includes(recorded()), 120_000);
    // Everything dies (a reboot that kept the disk, a restored snapshot); the dead dnsmasq's pid goes to another process,
    // here even one whose program is called dnsmasq too (it is not the one recorded: its arguments differ).
    killDaemon('SIGKILL');
    for (const p of dnsmasqPids()) process.kill(p, 'SIGKILL');
    await until('the daemon and dnsmasq gone', () => !daemonPids().length && !dnsmasqPids().length, 120_000);
    mkdirSync(path.join(root, 'bin'), { recursive: true });
    symlinkSync('/bin/sleep', path.join(root, 'bin', 'dnsmasq'));
    const other = spawn(path.join(root, 'bin', 'dnsmasq'), ['600'], { stdio: 'ignore' });
    await new Promise((r) => other.once('spawn', r));
    writeFileSync(pidFile, readFileSync(pidFile, 'utf8').replace(/^pid: \d+$/m, `pid: ${other.pid}`));
    try {
      expect(await daemonSh()).toContain(`LXD: removing the stale pid file ${pidFile} (pid ${other.pid} no longer runs dnsmasq)`);
      // The network is up again with a new dnsmasq: the moment a daemon that trusted the file would have killed the pid.
      await until('a new dnsmasq', () => existsSync(pidFile) && dnsmasqPids().includes(recorded()), 120_000);
      expect(recorded()).not.toBe(other.pid);
      const state = existsSync(`/proc/${other.pid}/stat`) ? readFileSync(`/proc/${other.pid}/stat`, 'utf8').split(') ')[1]![0] : 'gone';
      expect(state, 'the process that has the pid now still runs').not.toMatch(/^(Z|gone)$/);
    } finally {
      other.kill('SIGKILL');
    }
  }, 300_000);
});
