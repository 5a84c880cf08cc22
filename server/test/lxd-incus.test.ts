import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INCUS, lxdDeployment, type LxdDeployment } from './lxd-fixtures';
import { until, vncHandshake } from './machines-desktops';

/**
 * The same provider on Incus 6 (the LXD API's other lineage; issue 20 asks for both): host-setup.sh with
 * LXD_ENGINE=incus installs it (bookworm-backports on Debian 12), starts incusd where none runs and prepares the
 * deployment exactly as for LXD. Incus differs where it matters to a desktop: its guest API is /dev/incus, not
 * /dev/lxd (the desktop's name comes from there), and its trust command is `add-certificate`. The desktops share
 * the image's /usr as on LXD (a volume of the project).
 */
describe('lxd machine provider on Incus', () => {
  let d: LxdDeployment;
  const a = { machineId: randomUUID(), name: 'Incus · Lyon' };
  const incus = (args: string[]) => execFileSync('incus', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  beforeAll(async () => {
    d = await lxdDeployment({ diskMb: 100, memoryMb: 512, pids: 300 }, undefined, INCUS);
  }, 3_600_000);
  afterAll(async () => {
    await d?.close();
  });

  it('runs on incusd: a desktop starts, greets over VNC through the API with its own name, and stops', async () => {
    expect(JSON.parse(incus(['query', '/1.0'])).environment.server).toBe('incus');
    await d.provider.start(a);
    const running = await until('running', async () => {
      const x = await d.provider.describe(a.machineId);
      return x.state === 'running' ? x : null;
    }, 120_000, 200);
    expect(running.endpoint?.ref).toMatchObject({ instance: `hd-${a.machineId}`, project: d.project });
    expect((await vncHandshake(running.endpoint!)).name).toBe(a.name);
    expect((await d.said(a.machineId, 'id -u')).out.trim()).toBe('1000');
    // Its /usr is the project's volume with the image's /usr (every desktop maps the same files: one copy in memory),
    // read-only, its files nobody's inside (unmapped): the tenant cannot change them, nor can the desktop's root.
    const vol = readFileSync(path.join(d.dataDir, 'lxd', 'usr-volume'), 'utf8').trim();
    const inside = await d.said(a.machineId, 'stat -c "%i %u" /usr/bin/bash; touch /usr/bin/x 2>&1');
    expect(inside.out).toContain(`${statSync(`/var/lib/incus/storage-pools/hyperdesk/custom/${d.project}_${vol}/bin/bash`).ino} 65534`);
    expect(inside.out).toContain('Read-only file system');
    expect(await d.rootShell(a.machineId, 'touch /usr/bin/x 2>&1')).toContain('Read-only file system');
    // The home's quota (100 MB) holds on Incus's btrfs too.
    const full = await d.shell(a.machineId, 'dd if=/dev/zero of=~/big bs=1M count=200 2>&1; rm -f ~/big', 120_000);
    expect(full.out).toContain('Disk quota exceeded');
    expect(await d.provider.list()).toEqual([a.machineId]);
    await d.provider.stop(a.machineId);
    await until('stopped', async () => (await d.provider.describe(a.machineId)).state === 'stopped', 60_000, 200);
  }, 300_000);

  it("the deployment's certificate reaches its own project only", async () => {
    await expect(d.lxd.get('/1.0/instances?project=default')).rejects.toThrow();
    const mine = await d.lxd.get<string[]>('/1.0/instances');
    expect(mine).toEqual([`/1.0/instances/hd-${a.machineId}?project=${d.project}`]);
    // The project allows no host path (the shared /usr is a volume of its own): a server whose certificate is stolen
    // cannot mount /etc, nor the directory an older version shared /usr from.
    for (const source of ['/etc', '/var/lib/hyperdesk/usr']) {
      const mount = d.lxd.send('PATCH', `/1.0/instances/hd-${a.machineId}`, { devices: { host: { type: 'disk', source, path: '/mnt/host' } } });
      await expect(mount, source).rejects.toThrow(/forbidden|not allowed/);
    }
    expect(Object.keys((await d.lxd.get<{ devices: Record<string, unknown> }>(`/1.0/instances/hd-${a.machineId}`)).devices)).not.toContain('host');
  });
});
