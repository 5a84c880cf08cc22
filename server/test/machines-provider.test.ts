import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createLocalProvider } from '../src/modules/machines/providers/local';
import { signal } from '../src/modules/machines/providers/procs';
import type { MachineProvider } from '../src/modules/machines/providers/types';
import { desktopProcesses, portAnswers, until, vncHandshake, windowTitles } from './machines-desktops';

/** The local provider against real Xvfb/openbox/xterm/x11vnc desktops on this host. */
describe('local machine provider', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hd-provider-'));
  let provider: MachineProvider;
  const a = { machineId: randomUUID(), name: 'Unreal Engine · Germany' };
  const b = { machineId: randomUUID(), name: 'Second desk' };
  const state = (id: string) => JSON.parse(readFileSync(path.join(dataDir, 'machines', id, 'state.json'), 'utf8'));

  beforeAll(() => {
    provider = createLocalProvider({ dataDir });
  });
  afterAll(async () => {
    for (const id of await provider.list()) await provider.destroy(id);
    expect(desktopProcesses(dataDir)).toEqual([]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const running = (id: string) =>
    until(`${id} running`, async () => {
      const d = await provider.describe(id);
      return d.state === 'running' ? d : null;
    });

  it('starts two desktops in parallel, each on its own display and port, answering a VNC handshake', async () => {
    await Promise.all([provider.start(a), provider.start(b)]);
    const [da, db] = await Promise.all([running(a.machineId), running(b.machineId)]);
    expect(da.endpoint!.host).toBe('127.0.0.1');
    expect(da.endpoint!.port).not.toBe(db.endpoint!.port);
    expect(state(a.machineId).display).not.toBe(state(b.machineId).display);
    expect(state(a.machineId).display).toBeGreaterThanOrEqual(100);

    const ha = await vncHandshake(da.endpoint!.port);
    const hb = await vncHandshake(db.endpoint!.port);
    expect(ha).toMatchObject({ version: expect.stringMatching(/^RFB 003\.00\d$/), width: 1280, height: 800, name: a.name });
    expect(hb.name).toBe(b.name);
    expect((await provider.list()).sort()).toEqual([a.machineId, b.machineId].sort());
  });

  it('shows the machine name on the desktop and runs its programs with the machine home', async () => {
    const titles = await until('xterm window', () => {
      const t = windowTitles(state(a.machineId).display);
      return t.includes(a.name) ? t : null;
    });
    expect(titles).toContain(a.name);
    const comms = desktopProcesses(dataDir).filter((p) => p.machineId === a.machineId).map((p) => p.comm);
    expect(comms).toEqual(expect.arrayContaining(['Xvfb', 'openbox', 'xterm', 'x11vnc']));
    const home = path.join(dataDir, 'machines', a.machineId, 'home');
    const xvfb = desktopProcesses(dataDir).find((p) => p.machineId === a.machineId && p.comm === 'Xvfb')!;
    expect(readFileSync(`/proc/${xvfb.pid}/environ`, 'latin1').split('\0')).toContain(`HOME=${home}`);
    if (process.getuid?.() === 0) expect(statSync(`/proc/${xvfb.pid}`).uid).not.toBe(0); // no root shells for users
  });

  it('start is idempotent and a second provider over the same data dir adopts the running desktop', async () => {
    const before = state(a.machineId);
    await provider.start(a);
    const restarted = createLocalProvider({ dataDir });
    await restarted.start(a);
    expect(state(a.machineId)).toEqual(before);
    expect((await restarted.describe(a.machineId)).state).toBe('running');
    expect((await restarted.list()).sort()).toEqual([a.machineId, b.machineId].sort());
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === a.machineId && p.comm === 'Xvfb')).toHaveLength(1);
  });

  it('stop ends every process, frees display and port, and keeps the home folder for the next start', async () => {
    const { display, port } = state(a.machineId);
    const home = path.join(dataDir, 'machines', a.machineId, 'home');
    writeFileSync(path.join(home, 'notes.txt'), 'kept');
    await provider.stop(a.machineId);
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === a.machineId)).toEqual([]);
    expect(existsSync(`/tmp/.X${display}-lock`)).toBe(false);
    expect(existsSync(`/tmp/.X11-unix/X${display}`)).toBe(false);
    expect(await portAnswers(port)).toBe(false);
    expect((await provider.describe(a.machineId)).state).toBe('stopped');
    expect(await provider.list()).toEqual([b.machineId]);
    await provider.stop(a.machineId); // idempotent

    await provider.start(a);
    const d = await running(a.machineId);
    expect((await vncHandshake(d.endpoint!.port)).name).toBe(a.name);
    expect(readFileSync(path.join(home, 'notes.txt'), 'utf8')).toBe('kept');
  });

  it('a desktop whose session died is reported stopped, and its leftovers are found and cleaned up', async () => {
    const { pgid } = state(b.machineId);
    signal(pgid, 'SIGKILL'); // only the session leader: Xvfb, x11vnc and friends are left behind
    await until('leader gone', async () => (await provider.describe(b.machineId)).state === 'stopped');
    expect(desktopProcesses(dataDir).some((p) => p.machineId === b.machineId)).toBe(true);
    expect(await provider.list()).toContain(b.machineId);
    await provider.start(b); // cleans the leftovers, then starts afresh
    await running(b.machineId);
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === b.machineId && p.comm === 'Xvfb')).toHaveLength(1);
  });

  it('destroy removes the machine folder', async () => {
    await provider.destroy(b.machineId);
    expect(existsSync(path.join(dataDir, 'machines', b.machineId))).toBe(false);
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === b.machineId)).toEqual([]);
  });

  it('ends desktops whose data dir was deleted (nothing could ever adopt them)', async () => {
    const otherDir = mkdtempSync(path.join(tmpdir(), 'hd-provider-gone-'));
    const other = createLocalProvider({ dataDir: otherDir });
    const lost = { machineId: randomUUID(), name: 'Lost desk' };
    await other.start(lost);
    expect(desktopProcesses(otherDir).length).toBeGreaterThan(0);
    rmSync(otherDir, { recursive: true, force: true });
    await provider.list();
    expect(desktopProcesses(otherDir)).toEqual([]);
  });

  it('preflight reports nothing missing on a host with the desktop programs', async () => {
    expect(await provider.preflight!()).toBeNull();
  });
});
