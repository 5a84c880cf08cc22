import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { instanceOf } from '../src/modules/machines/providers/lxd/provider';
import { lxdDeployment, type LxdDeployment } from './lxd-fixtures';
import { until, vncHandshake } from './machines-desktops';

/**
 * The lxd provider against the host's real LXD daemon, prepared by scripts/lxd/host-setup.sh as npm start prepares
 * it. Every attack runs from a tenant's shell: `lxc exec` as the desktop's user (uid 1000) in A's instance.
 */
describe('lxd machine provider', () => {
  let d: LxdDeployment;
  const a = { machineId: randomUUID(), name: 'Unreal Engine · Germany' };
  const b = { machineId: randomUUID(), name: 'Second desk' };

  beforeAll(async () => {
    d = await lxdDeployment({ diskMb: 100, memoryMb: 512, pids: 300 });
  }, 3_600_000);
  afterAll(async () => {
    await d?.close();
  });

  const running = (id: string) =>
    until(`${id} running`, async () => {
      const x = await d.provider.describe(id);
      return x.state === 'running' ? x : null;
    }, 120_000, 200);
  const ipOf = async (id: string) =>
    until(`${id} address`, async () => {
      const state = await d.lxd.get<{ network: Record<string, { addresses: { family: string; address: string }[] }> | null }>(`/1.0/instances/${instanceOf(id)}/state`);
      return state.network?.eth0?.addresses.find((x) => x.family === 'inet')?.address ?? null;
    }, 60_000, 200);
  /** "open" or "closed": a TCP connection from A's tenant shell. */
  const tcpFromA = async (host: string, port: number) =>
    (await d.shell(a.machineId, `timeout 3 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null && echo open || echo closed`)).out.trim();

  it('starts two desktops in parallel, each answering VNC through the API (exec as its user) with its own name', async () => {
    let changes = 0;
    d.provider.onChange?.(() => changes++);
    await Promise.all([d.provider.start(a), d.provider.start(b)]);
    const [da, db] = await Promise.all([running(a.machineId), running(b.machineId)]);
    // Each start's first answer woke the listener (the reconciler), once. (On a loaded host running can come from an
    // exec probe before the link has said so: wait for it.)
    await until('both first answers told', () => changes >= 2, 60_000);
    expect(changes).toBe(2);
    expect(da.endpoint?.ref).toMatchObject({ instance: `hd-${a.machineId}`, project: d.project });
    expect((await vncHandshake(da.endpoint!)).name).toBe(a.name);
    expect((await vncHandshake(db.endpoint!)).name).toBe(b.name);
    expect((await d.provider.list()).sort()).toEqual([a.machineId, b.machineId].sort());
    expect((await d.said(a.machineId, 'id -u; echo $HOME; touch ~/mine && echo ok')).out.trim().split('\n')).toEqual(['1000', '/home/user', 'ok']);
  }, 300_000);

  it("the desktops share one read-only /usr, the project's volume of the image's: nobody's files that neither a tenant nor a desktop's root can change", async () => {
    const vol = readFileSync(path.join(d.dataDir, 'lxd', 'usr-volume'), 'utf8').trim();
    const onHost = statSync(`/var/lib/lxd/storage-pools/hyperdesk/custom/${d.project}_${vol}/bin/bash`);
    // The same file (inode) in both desktops: one copy of every program and library in memory.
    const look = 'stat -c "%i %u" /usr/bin/bash; touch /usr/bin/x 2>&1';
    for (const id of [a.machineId, b.machineId]) {
      const inside = await d.shell(id, look);
      expect(inside.out).toContain(`${onHost.ino} 65534`);
      expect(inside.out).toContain('Read-only file system');
    }
    // Their own roots hold no /usr (made from the image without it): a new desktop's first start remaps the owner of
    // every file of its root, and /usr was 86% of them (4.6 s of that start on a 2-core Xeon).
    for (const id of [a.machineId, b.machineId]) {
      expect(readdirSync(`/var/lib/lxd/storage-pools/hyperdesk/containers/${d.project}_${instanceOf(id)}/rootfs/usr`)).toEqual([]);
    }
    const root = await d.rootShell(a.machineId, 'touch /usr/bin/x 2>&1; mount -o remount,rw /usr 2>&1; touch /usr/bin/x 2>&1; ls /usr/bin/x 2>&1');
    expect(root).toContain('Read-only file system');
    expect(root).toContain('No such file or directory');
    // The project still allows no host path: the volume is one of its own.
    const mount = d.lxd.send('PATCH', `/1.0/instances/${instanceOf(a.machineId)}`, { devices: { host: { type: 'disk', source: '/etc', path: '/mnt/host' } } });
    await expect(mount).rejects.toThrow(/forbidden|not allowed/);
  });

  it("a tenant's shell reaches neither another desktop, nor the host's services, nor private ranges or cloud metadata", async () => {
    const bIp = await ipOf(b.machineId);
    const aIp = await ipOf(a.machineId);
    // B listens on a port; the host reaches it (the listener works), A does not.
    await d.rootShell(b.machineId, 'nohup socat TCP-LISTEN:7000,fork,reuseaddr SYSTEM:"echo hi" >/dev/null 2>&1 &');
    await until('B listening', async () => (await d.rootShell(b.machineId, 'ss -ltn')).includes(':7000'));
    expect(await tcpFromA(bIp, 7000)).toBe('closed');
    // The host's own services: PostgreSQL and Redis on the host's addresses, the bridge's gateway, any port.
    const gateway = '10.251.0.1';
    for (const [host, port] of [[gateway, 5432], [gateway, 6379], [gateway, 8443], [gateway, 22], ['192.0.2.2', 5432], ['169.254.169.254', 80], ['10.0.0.1', 80], ['192.168.1.1', 80], ['172.16.0.1', 80]] as const) {
      expect(`${host}:${port} ${await tcpFromA(host, port)}`).toBe(`${host}:${port} closed`);
    }
    // Its own loopback is its own (nothing of the host's there).
    expect(await tcpFromA('127.0.0.1', 5432)).toBe('closed');
    expect(aIp).not.toBe(bIp);
  }, 120_000);

  it("a symlink or socket the tenant plants in its run dir leads the gateway nowhere but A's own desktop", async () => {
    // A replaces its VNC socket with a link to a path of the host (the server's data dir) and to B's instance name.
    const r = await d.shell(a.machineId, `mv /run/hyperdesk/vnc.sock /run/hyperdesk/vnc.real && ln -s ${d.dataDir}/lxd/client.key /run/hyperdesk/vnc.sock && echo planted`);
    expect(r.out).toContain('planted');
    const ep = (await d.provider.describe(a.machineId)).endpoint!;
    expect(ep.ref).toMatchObject({ instance: `hd-${a.machineId}` }); // always A's own instance, whatever A did
    await expect(vncHandshake(ep, '127.0.0.1', 3000)).rejects.toThrow();
    await d.shell(a.machineId, 'mv -f /run/hyperdesk/vnc.real /run/hyperdesk/vnc.sock');
    expect((await vncHandshake((await running(a.machineId)).endpoint!)).name).toBe(a.name);
  }, 120_000);

  it('writing past the home quota says "Disk quota exceeded" and the machine keeps running', async () => {
    const r = await d.shell(a.machineId, 'dd if=/dev/zero of=~/big bs=1M count=300 2>&1', 120_000);
    const after = await d.provider.describe(a.machineId);
    const name = after.endpoint ? (await vncHandshake(after.endpoint)).name : null;
    await d.shell(a.machineId, 'rm -f ~/big');
    expect(r.out).toContain('Disk quota exceeded');
    expect(after.state).toBe('running');
    expect(name).toBe(a.name);
  }, 180_000);

  it('a memory hog and a fork bomb in A stop nothing but what A runs; B answers throughout', async () => {
    const hog = await d.shell(a.machineId, `python3 -c 'b = b"x" * (900 * 2**20); print("survived")' 2>&1; echo "exit $?"`, 120_000);
    expect(hog.out).not.toMatch(/^survived$/m);
    expect(hog.out).toMatch(/exit 137|MemoryError/);
    // A fork bomb: children that stay, until the kernel refuses one (the instance's process limit, 300 here).
    const bomb = await d.shell(a.machineId, `python3 - <<'EOF'
import os, signal, time
pids = []
try:
    for _ in range(1000):
        pid = os.fork()
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        pids.append(pid)
except OSError as e:
    print('refused after', len(pids), e.strerror)
for p in pids:
    os.kill(p, signal.SIGKILL)
    os.waitpid(p, 0)
EOF`, 120_000);
    const refused = /refused after (\d+) Resource temporarily unavailable/.exec(bomb.out);
    expect(refused, bomb.out).not.toBeNull();
    expect(Number(refused![1])).toBeLessThan(300);
    expect((await vncHandshake((await running(b.machineId)).endpoint!)).name).toBe(b.name);
  }, 240_000);

  it('stop keeps the home; a seat that moves to another student gets that student’s home', async () => {
    await d.shell(a.machineId, 'echo kept > ~/notes.txt');
    await d.provider.stop(a.machineId);
    expect((await d.provider.describe(a.machineId)).state).toBe('stopped');
    // The home it mounts is not asked for again (LXD answers that by reading every instance of the project).
    const sent = vi.spyOn(d.lxd, 'send');
    const volumeCalls = () => sent.mock.calls.filter(([method, p]) => method === 'POST' && p.includes('/storage-pools/')).length;
    const got = vi.spyOn(d.lxd, 'get');
    await d.provider.start(a);
    expect(volumeCalls()).toBe(0);
    // Until its link says it answers, a starting desktop is looked up at most once a second, however often asked
    // (a look after it answered is a real one: counted apart, should the desktop be that quick).
    let starting = 0;
    for (let i = 0; i < 5; i++) if ((await d.provider.describe(a.machineId)).state === 'starting') starting++;
    expect(starting).toBeGreaterThan(0);
    expect(got.mock.calls.filter(([p]) => p === `/1.0/instances/${instanceOf(a.machineId)}`).length).toBeLessThanOrEqual(2 + (5 - starting));
    got.mockRestore();
    await running(a.machineId);
    // A viewer's way in, once its link has spoken (its exec may start after the probe that found the desktop
    // running): LXD is not asked whether the instance runs, and the way works.
    const asked = vi.spyOn(d.lxd, 'get');
    const lookups = () => asked.mock.calls.filter(([p]) => p.startsWith(`/1.0/instances/${instanceOf(a.machineId)}`)).length;
    await until('a way in without asking LXD', async () => {
      asked.mockClear();
      await d.provider.endpoints!(a.machineId);
      return lookups() === 0;
    }, 30_000, 100);
    asked.mockClear();
    const ways = await Promise.all([1, 2, 3].map(() => d.provider.endpoints!(a.machineId)));
    expect(lookups()).toBe(0);
    asked.mockRestore();
    expect((await vncHandshake(ways[0]!.endpoint!)).name).toBe(a.name);
    expect((await d.said(a.machineId, 'cat ~/notes.txt')).out.trim()).toBe('kept');
    await d.provider.stop(a.machineId);
    await d.provider.start({ ...a, homeKey: `course-x-${randomUUID()}` });
    expect(volumeCalls()).toBe(1);
    sent.mockRestore();
    await running(a.machineId);
    expect((await d.said(a.machineId, 'ls -A ~ | grep -c notes.txt')).out.trim()).toBe('0');
  }, 240_000);

  it('a second deployment on this host has its own project: it lists only its own machines and cannot touch these', async () => {
    const other = await lxdDeployment();
    try {
      const c = { machineId: randomUUID(), name: 'Other deployment' };
      await other.provider.start(c);
      expect(await other.provider.list()).toEqual([c.machineId]);
      expect((await d.provider.list()).sort()).toEqual([a.machineId, b.machineId].sort());
      // Its certificate is refused for this deployment's project, and its own view has no such instance.
      await expect(other.lxd.get(`/1.0/instances/${instanceOf(a.machineId)}?project=${d.project}`)).rejects.toThrow();
      expect((await other.provider.describe(a.machineId)).state).toBe('stopped');
      await other.provider.destroy(a.machineId); // names A's id: touches nothing of ours
      expect((await d.provider.describe(a.machineId)).state).not.toBe('stopped');
      await other.provider.destroy(c.machineId);
      expect(await other.provider.list()).toEqual([]);
    } finally {
      await other.close();
    }
  }, 600_000);

  it('Reset machine brings the desktop back to the image and keeps the home; asked to, it erases the home too', async () => {
    await d.shell(b.machineId, 'echo kept > ~/work.txt && echo x > /var/tmp/installed-by-tenant');
    await d.provider.reset(b.machineId, { homeKey: b.machineId, eraseHome: false });
    expect((await d.provider.describe(b.machineId)).state).toBe('stopped');
    await d.provider.start(b);
    await running(b.machineId);
    expect((await d.said(b.machineId, 'cat ~/work.txt; ls /var/tmp | grep -c installed-by-tenant')).out.trim().split('\n')).toEqual(['kept', '0']);
    await d.provider.reset(b.machineId, { homeKey: b.machineId, eraseHome: true });
    await d.provider.start(b);
    await running(b.machineId);
    expect((await d.said(b.machineId, 'ls -A ~ | grep -c work.txt')).out.trim()).toBe('0');
  }, 300_000);

  it("prepare makes a new machine's desktop and home ahead of its first start, which then only starts it", async () => {
    const c = { machineId: randomUUID(), name: 'Made ahead' };
    const sent = vi.spyOn(d.lxd, 'send');
    // What it makes: the instance and its home (the deployment's profile too, when nothing made it before).
    const posts = () => sent.mock.calls.filter(([method, p]) => method === 'POST' && !p.startsWith('/1.0/profiles')).map(([, p]) => p.replace(/\?.*$/, ''));
    try {
      await d.provider.prepare!(c);
      const inst = await d.lxd.get<{ status: string; devices: Record<string, Record<string, string>> }>(`/1.0/instances/${instanceOf(c.machineId)}`);
      expect(inst.status).toBe('Stopped');
      expect(inst.devices.home).toMatchObject({ type: 'disk', path: '/home/user' });
      expect((await d.provider.describe(c.machineId)).state).toBe('stopped');
      expect(await d.provider.list()).not.toContain(c.machineId); // made, not running
      expect(posts()).toEqual(['/1.0/storage-pools/hyperdesk/volumes/custom', '/1.0/instances']);
      sent.mockClear();
      await d.provider.prepare!(c); // made already: nothing
      await d.provider.start(c);
      expect(posts()).toEqual([]);
      expect((await vncHandshake((await running(c.machineId)).endpoint!)).name).toBe(c.name);
    } finally {
      sent.mockRestore();
      await d.provider.destroy(c.machineId);
    }
  }, 240_000);

  it('two servers making the same new desktop at once (a leader that took over) make one instance, and neither fails', async () => {
    const c = { machineId: randomUUID(), name: 'Made twice' };
    const other = d.restarted();
    try {
      // Each looks, finds nothing, and creates: the one LXD refuses (the other's create under way, or done) counts it
      // as made. Then both start it: the later waits for the create.
      await Promise.all([d.provider.prepare!(c), other.prepare!(c)]);
      const names = await d.lxd.get<string[]>('/1.0/instances');
      expect(names.filter((u) => u.split('?')[0]!.endsWith(`/${instanceOf(c.machineId)}`))).toHaveLength(1);
      await Promise.all([d.provider.start(c), other.start(c)]);
      expect(await d.provider.list()).toContain(c.machineId);
      expect((await vncHandshake((await running(c.machineId)).endpoint!)).name).toBe(c.name);
    } finally {
      await d.provider.destroy(c.machineId);
    }
  }, 240_000);

  it('destroy removes the instance and its home volume', async () => {
    await d.provider.destroy(b.machineId);
    expect((await d.provider.describe(b.machineId)).state).toBe('stopped');
    expect(await d.provider.list()).toEqual([a.machineId]);
  }, 120_000);
});
