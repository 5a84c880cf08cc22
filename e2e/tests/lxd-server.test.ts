import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { lxdProjectFor } from '../../server/src/config';
import { launchBrowser, startServer, type RunningServer } from '../harness';
import { api, buyer, statusOf, waitOnline } from './connect-helpers';

/**
 * The server as npm start runs it on the lxd provider: unprivileged, and settling after kill -9 at any point of a
 * start or a stop with exactly one instance per machine and nothing orphaned.
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
