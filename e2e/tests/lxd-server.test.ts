import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { lxdProjectFor } from '../../server/src/config';
import { launchBrowser, startServer, type RunningServer } from '../harness';
import { api, buyer, statusOf, waitOnline } from './connect-helpers';

/**
 * The server as npm start runs it on the lxd provider: unprivileged, settling after kill -9 at any point of a start
 * or a stop with exactly one instance per machine and nothing orphaned, and not starved by the desktops beside it.
 */
let server: RunningServer;
let browser: Browser;
beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const project = () => lxdProjectFor(path.resolve(server.dataDir));
/** The deployment's instances: name → status. */
function instances(): Map<string, string> {
  const out = execFileSync('lxc', ['list', '--project', project(), '--format', 'csv', '-c', 'ns'], { encoding: 'utf8' });
  return new Map(out.trim().split('\n').filter(Boolean).map((l) => l.split(',') as [string, string]));
}
const until = async (what: string, fn: () => boolean | Promise<boolean>, ms = 60_000) => {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

it('runs as the unprivileged user hyperdesk: uid and gid not 0, no capabilities, not in the lxd group', () => {
  const status = readFileSync(`/proc/${server.proc.pid}/status`, 'utf8');
  const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)![1]!.trim().split(/\s+/);
  expect(readFileSync(`/proc/${server.proc.pid}/comm`, 'utf8').trim()).toBe('node');
  const hyperdesk = Number(execFileSync('id', ['-u', 'hyperdesk'], { encoding: 'utf8' }));
  expect(field('Uid').map(Number)).toEqual([hyperdesk, hyperdesk, hyperdesk, hyperdesk]);
  expect(field('Gid').map(Number).every((g) => g !== 0)).toBe(true);
  expect(field('CapEff')).toEqual(['0000000000000000']);
  expect(field('CapBnd')).toEqual(['0000000000000000']);
  expect(field('NoNewPrivs')).toEqual(['1']);
  const lxdGroup = execFileSync('getent', ['group', 'lxd'], { encoding: 'utf8' }).split(':')[2];
  expect(field('Groups').filter(Boolean)).not.toContain(lxdGroup); // the lxd group is root-equivalent
  expect(statSync(path.join(server.dataDir, 'lxd', 'client.key')).uid).toBe(hyperdesk);
});

it('kill -9 while a machine starts and while it stops: one instance per machine, settled, nothing orphaned', async () => {
  const b = await buyer(browser, server.base, 'Crash Tester');
  const name = `hd-${b.machineId}`;
  await api(server.base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId });
  await until('the instance being made', () => instances().has(name));
  server.proc.kill('SIGKILL');
  await server.restart();
  await waitOnline(server.base, b.token, b.machineId, 120_000);
  expect([...instances()]).toEqual([[name, 'RUNNING']]);

  await api(server.base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId, terminate: true });
  await until('the stop to reach the engine', async () => (await statusOf(server.base, b.token, b.machineId)) !== 'online');
  server.proc.kill('SIGKILL');
  await server.restart();
  await until('the machine offline', async () => (await statusOf(server.base, b.token, b.machineId)) === 'offline', 120_000);
  await until('the instance stopped', () => instances().get(name) === 'STOPPED');
  expect([...instances()]).toEqual([[name, 'STOPPED']]);
  await b.context.close();
}, 300_000);

/**
 * The CPU weight of the cgroup `pid` is in, as the kernel shares a busy CPU between cgroups: cpu.weight on cgroup v2,
 * cpu.shares on v1 (on the same scale, a v1 default of 1024 being v2's 100).
 */
function cpuWeight(pid: number): { cgroup: string; weight: number } {
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
  const v1 = lines.find((l) => /^\d+:([^:]*,)?cpu(,[^:]*)?:/.test(l));
  if (v1) {
    const cgroup = v1.split(':')[2]!;
    const mount = ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct'].find((m) => existsSync(m))!;
    return { cgroup, weight: Number(readFileSync(path.join(mount, cgroup, 'cpu.shares'), 'utf8')) / 1024 };
  }
  const cgroup = lines.find((l) => l.startsWith('0::'))!.slice(3);
  return { cgroup, weight: Number(readFileSync(path.join('/sys/fs/cgroup', cgroup, 'cpu.weight'), 'utf8')) / 100 };
}

it('weighs as much as 20 desktops when the CPU is contended (its own cgroup; a desktop is one cgroup, not one process)', async () => {
  const b = await buyer(browser, server.base, 'Weight Tester');
  await api(server.base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId });
  await waitOnline(server.base, b.token, b.machineId, 120_000);
  const info = execFileSync('lxc', ['query', `/1.0/instances/hd-${b.machineId}/state?project=${project()}`], { encoding: 'utf8' });
  const desktop = cpuWeight(JSON.parse(info).pid as number);
  const own = cpuWeight(server.proc.pid!);
  const runner = cpuWeight(process.pid).cgroup;
  if (runner !== '/') {
    // Started from a cgroup a service manager made (scripts/server-cgroup.sh leaves it to the manager's CPUWeight=).
    expect(own.cgroup).toBe(runner);
  } else {
    expect(own.cgroup).toBe('/hyperdesk');
    expect(desktop.cgroup).not.toBe(own.cgroup);
    expect(own.weight / desktop.weight).toBe(20);
  }
  await api(server.base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId, terminate: true });
  await b.context.close();
}, 300_000);
