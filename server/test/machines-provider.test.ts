import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createLocalProvider } from '../src/modules/machines/providers/local';
import { signal } from '../src/modules/machines/providers/procs';
import { lookupUser, userNameOf } from '../src/modules/machines/providers/users';
import type { MachineProvider } from '../src/modules/machines/providers/types';
import { desktopProcesses, inSandbox, socketAnswers, trustedUnixSocket, until, vncHandshake, windowTitles } from './machines-desktops';

/** The local provider against real sandboxed desktops (bwrap, Xvfb, openbox, tint2, xterm, x11vnc) on this host. */
describe('local machine provider', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hd-provider-'));
  let provider: MachineProvider;
  const a = { machineId: randomUUID(), name: 'Unreal Engine · Germany' };
  const b = { machineId: randomUUID(), name: 'Second desk' };
  const state = (id: string) => JSON.parse(readFileSync(path.join(dataDir, 'machines', id, 'state.json'), 'utf8'));

  beforeAll(() => {
    provider = createLocalProvider({ dataDir, egress: 'none' });
  });
  afterAll(async () => {
    for (const id of await provider.list()) await provider.destroy(id);
    for (const m of [a, b]) await provider.destroy(m.machineId);
    expect(desktopProcesses(dataDir)).toEqual([]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const running = (id: string) =>
    until(`${id} running`, async () => {
      const d = await provider.describe(id);
      return d.state === 'running' ? d : null;
    });

  it('starts two desktops in parallel, each answering a VNC handshake on its own Unix socket', async () => {
    await Promise.all([provider.start(a), provider.start(b)]);
    const [da, db] = await Promise.all([running(a.machineId), running(b.machineId)]);
    expect(da.endpoint?.ref.path).toBe(path.join(dataDir, 'machines', a.machineId, 'run', 'vnc.sock'));
    expect(da.endpoint?.ref).not.toEqual(db.endpoint?.ref);
    const ha = await vncHandshake(da.endpoint!);
    const hb = await vncHandshake(db.endpoint!);
    expect(ha).toMatchObject({ version: expect.stringMatching(/^RFB 003\.00\d$/), width: 1920, height: 1080, name: a.name });
    expect(hb.name).toBe(b.name);
    expect((await provider.list()).sort()).toEqual([a.machineId, b.machineId].sort());
  });

  it("a tenant's symlink or swapped socket in its own run dir never leads the server to another machine's desktop", async () => {
    const bRun = path.join(dataDir, 'machines', b.machineId, 'run');
    const aRun = path.join(dataDir, 'machines', a.machineId, 'run');
    // A's user points its own VNC and agent sockets at B's (host paths: the root server would resolve them).
    for (const [sock, target] of [['vnc.sock', `${bRun}/vnc.sock`], ['agent.sock', `${bRun}/agent.sock`]]) {
      const r = inSandbox(dataDir, a.machineId, `mv /run/hyperdesk/${sock} /run/hyperdesk/${sock}.old 2>/dev/null; ln -s ${target} /run/hyperdesk/${sock} && echo planted`);
      expect(r.out).toContain('planted');
    }
    const d = await provider.describe(a.machineId);
    for (const ep of [d.endpoint, d.agent].filter((e) => e !== undefined)) {
      await expect(vncHandshake(ep)).rejects.toThrow();
    }
    expect(await socketAnswers(trustedUnixSocket(`${aRun}/vnc.sock`))).toBe(true); // the link itself leads to B
    // Put back, A's desktop answers as before.
    inSandbox(dataDir, a.machineId, 'cd /run/hyperdesk && for s in vnc agent; do [ -e $s.sock.old ] && mv -f $s.sock.old $s.sock; done; true');
    const again = await provider.describe(a.machineId);
    expect((await vncHandshake(again.endpoint!)).name).toBe(a.name);
  });

  it('runs the desktop programs as the machine’s own user, with its home at /home/user', async () => {
    const titles = await until('xterm window', () => {
      const t = windowTitles(dataDir, a.machineId);
      return [a.name, 'glxgears', 'tint2'].every((w) => t.includes(w)) ? t : null;
    });
    expect(titles).toEqual(expect.arrayContaining([a.name, 'glxgears', 'tint2']));
    const comms = desktopProcesses(dataDir).filter((p) => p.machineId === a.machineId).map((p) => p.comm);
    expect(comms).toEqual(expect.arrayContaining(['Xvfb', 'openbox', 'tint2', 'pcmanfm', 'xterm', 'glxgears', 'x11vnc']));
    const user = lookupUser(userNameOf(dataDir, a.machineId))!;
    expect(user.uid).not.toBe(0);
    const inside = inSandbox(dataDir, a.machineId, 'id -u; echo "$HOME"; cd && touch made-inside && echo ok; touch /usr/x 2>/dev/null || echo ro');
    expect(inside.out.split('\n').slice(0, 4)).toEqual([String(user.uid), '/home/user', 'ok', 'ro']);
    expect(statSync(path.join(dataDir, 'homes', a.machineId, 'made-inside')).uid).toBe(user.uid);
  });

  it('a desktop whose screen size changes (the streaming agent fits it to the tab) keeps running, and VNC shows the new size', async () => {
    // The agent's own RandR code, run inside the desktop's sandbox against its X server.
    const xscreen = readFileSync(path.join(import.meta.dirname, '../agent/xscreen.py'), 'utf8');
    // Each size is reached through two others a moment apart, as a tab being resized asks for.
    const resize = (w: number, h: number) =>
      inSandbox(dataDir, a.machineId, `DISPLAY=:0 XAUTHORITY=/run/hyperdesk/xauth python3 - <<'EOF'\n${xscreen}
import time
s = XScreen(':0')
for size in [(${w} - 100, ${h} - 60), (${w} - 40, ${h} - 20), (${w}, ${h})]:
    s.resize(*size)
    time.sleep(0.3)
print(s.size() == (${w}, ${h}))\nEOF`);
    const xvfb = () => desktopProcesses(dataDir).find((p) => p.machineId === a.machineId && p.comm === 'Xvfb')!.pid;
    const x = xvfb();
    const endpoint = (await running(a.machineId)).endpoint!;
    for (const [w, h] of [[1280, 854], [1000, 612], [1600, 900]] as const) {
      expect(resize(w, h).out.trim()).toBe('True');
      const shown = await until(`VNC at ${w}x${h}`, () => vncHandshake(endpoint).then((v) => v.width === w && v.height === h, () => false));
      expect(shown).toBe(true);
      expect((await provider.describe(a.machineId)).state).toBe('running');
    }
    expect(xvfb()).toBe(x); // the same desktop, not a restarted one
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === a.machineId && p.comm === 'x11vnc')).toHaveLength(1);
  });

  it('a VNC server that ends is started again inside the desktop: the desktop and its programs keep running', async () => {
    const ofA = (comm: string) => desktopProcesses(dataDir).filter((p) => p.machineId === a.machineId && p.comm === comm);
    const [x, vnc] = [ofA('Xvfb')[0]!.pid, ofA('x11vnc')[0]!.pid];
    signal(vnc, 'SIGKILL');
    await until('a new x11vnc', () => ofA('x11vnc').some((p) => p.pid !== vnc));
    const d = await running(a.machineId);
    expect((await vncHandshake(d.endpoint!)).name).toBe(a.name);
    expect(ofA('Xvfb')[0]!.pid).toBe(x);
    expect(ofA('x11vnc')).toHaveLength(1);
  });

  it('start is idempotent and a second provider over the same data dir adopts the running desktop', async () => {
    const before = state(a.machineId);
    await provider.start(a);
    const restarted = createLocalProvider({ dataDir, egress: 'none' });
    await restarted.start(a);
    expect(state(a.machineId)).toEqual(before);
    expect((await restarted.describe(a.machineId)).state).toBe('running');
    expect((await restarted.list()).sort()).toEqual([a.machineId, b.machineId].sort());
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === a.machineId && p.comm === 'Xvfb')).toHaveLength(1);
  });

  it('stop ends every process and keeps the home folder for the next start', async () => {
    const home = path.join(dataDir, 'homes', a.machineId);
    const sock = { path: path.join(dataDir, 'machines', a.machineId, 'run', 'vnc.sock') };
    writeFileSync(path.join(home, 'notes.txt'), 'kept');
    // A process that left the desktop's session and process group is still the machine's.
    inSandbox(dataDir, a.machineId, 'setsid -f env -i sleep 300 </dev/null >/dev/null 2>&1');
    await until('escaped sleep', () => desktopProcesses(dataDir).some((p) => p.machineId === a.machineId && p.comm === 'sleep'));
    await provider.stop(a.machineId);
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === a.machineId)).toEqual([]);
    expect(await socketAnswers(trustedUnixSocket(sock.path))).toBe(false);
    expect((await provider.describe(a.machineId)).state).toBe('stopped');
    expect(await provider.list()).toEqual([b.machineId]);
    await provider.stop(a.machineId); // idempotent

    await provider.start(a);
    const d = await running(a.machineId);
    expect((await vncHandshake(d.endpoint!)).name).toBe(a.name);
    expect(readFileSync(path.join(home, 'notes.txt'), 'utf8')).toBe('kept');
  });

  it('a desktop whose supervisor died is reported stopped, and its leftovers are found and cleaned up', async () => {
    signal(state(b.machineId).supervisor, 'SIGKILL');
    await until('supervisor gone', async () => (await provider.describe(b.machineId)).state === 'stopped');
    await provider.start(b); // cleans the leftovers, then starts afresh
    await running(b.machineId);
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === b.machineId && p.comm === 'Xvfb')).toHaveLength(1);
  });

  it('destroy removes the machine folder, its home and its user', async () => {
    await provider.destroy(b.machineId);
    expect(existsSync(path.join(dataDir, 'machines', b.machineId))).toBe(false);
    expect(existsSync(path.join(dataDir, 'homes', b.machineId))).toBe(false);
    expect(lookupUser(userNameOf(dataDir, b.machineId))).toBeNull();
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === b.machineId)).toEqual([]);
  });

  it('ends desktops whose data dir was deleted (nothing could ever adopt them) and removes their user', async () => {
    const otherDir = mkdtempSync(path.join(tmpdir(), 'hd-provider-gone-'));
    const other = createLocalProvider({ dataDir: otherDir, egress: 'none' });
    const lost = { machineId: randomUUID(), name: 'Lost desk' };
    await other.start(lost);
    expect(desktopProcesses(otherDir).length).toBeGreaterThan(0);
    rmSync(otherDir, { recursive: true, force: true });
    await provider.list();
    expect(desktopProcesses(otherDir)).toEqual([]);
    expect(lookupUser(userNameOf(otherDir, lost.machineId))).toBeNull();
  });

  it('preflight reports nothing missing on a host with the desktop programs', async () => {
    expect(await provider.preflight!()).toBeNull();
  });
});
