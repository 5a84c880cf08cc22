import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createLocalProvider } from '../src/modules/machines/providers/local';
import { machineCgroup } from '../src/modules/machines/providers/cgroups';
import { signal } from '../src/modules/machines/providers/procs';
import { lookupUser, userNameOf } from '../src/modules/machines/providers/users';
import type { MachineProvider } from '../src/modules/machines/providers/types';
import { desktopProcesses, inSandbox, runDirOf, until } from './machines-desktops';

/**
 * Issue 13: every local machine is a sandbox. Each check runs a shell inside desktop A (its namespaces, its
 * cgroup, its user) and tries what a user's program could try against desktop B, the host and the server.
 */
describe('sandboxed local desktops', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hd-sandbox-'));
  const offlineDir = mkdtempSync(path.join(tmpdir(), 'hd-sandbox-none-'));
  const MEMORY_MB = 700;
  const PIDS = 200;
  let online: MachineProvider; // MACHINE_EGRESS=internet
  let offline: MachineProvider; // MACHINE_EGRESS=none
  let api: Server;
  let apiPort = 0;
  const A = { machineId: `a-${randomUUID()}`, name: 'Desk A' };
  const B = { machineId: `b-${randomUUID()}`, name: 'Desk B' };
  const C = { machineId: `c-${randomUUID()}`, name: 'Desk C (no network)' };
  const inA = (script: string) => inSandbox(dataDir, A.machineId, script);
  const running = (p: MachineProvider, id: string) =>
    until(`${id} running`, async () => ((await p.describe(id)).state === 'running' ? true : null), 30_000);

  beforeAll(async () => {
    online = createLocalProvider({ dataDir, egress: 'internet', limits: { memoryMb: MEMORY_MB, pids: PIDS } });
    offline = createLocalProvider({ dataDir: offlineDir, egress: 'none' });
    api = createServer((s) => s.end('hello from the API\n'));
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    apiPort = (api.address() as { port: number }).port;
    await Promise.all([online.start(A), online.start(B), offline.start(C)]);
    await Promise.all([running(online, A.machineId), running(online, B.machineId), running(offline, C.machineId)]);
    writeFileSync(path.join(dataDir, 'homes', B.machineId, 'secret.txt'), 'B only');
  }, 90_000);

  afterAll(async () => {
    api?.close();
    for (const [p, dir] of [[online, dataDir], [offline, offlineDir]] as const) {
      for (const id of await p.list()) await p.destroy(id);
      for (const m of [A, B, C]) await p.destroy(m.machineId);
      expect(desktopProcesses(dir)).toEqual([]);
      rmSync(dir, { recursive: true, force: true });
    }
    for (const m of [A, B]) expect(lookupUser(userNameOf(dataDir, m.machineId))).toBeNull();
  }, 60_000);

  it('A cannot read B’s home: it is not in A’s file system, and A’s user could not open it anyway', () => {
    const bHome = path.join(dataDir, 'homes', B.machineId);
    const r = inA(`ls /home; cat ${bHome}/secret.txt 2>&1; ls ${dataDir} 2>&1; id -u`);
    expect(r.out).toContain('No such file or directory');
    expect(r.out).not.toContain('B only');
    expect(r.out.split('\n')[0]).toBe('user');
    expect(Number(r.out.trim().split('\n').at(-1))).toBe(lookupUser(userNameOf(dataDir, A.machineId))!.uid);
  });

  it('A cannot see B’s processes (nor the server’s): its own PID namespace', () => {
    const bX = desktopProcesses(dataDir).find((p) => p.machineId === B.machineId && p.comm === 'Xvfb')!;
    const r = inA(`ps -eo comm= | sort | uniq -c | awk '$2=="Xvfb"{print $1}'; ps -eo uid= | sort -u | tr -d ' ' | tr '\\n' ,; echo; kill -0 ${bX.pid} 2>&1 || echo no-such; cat /proc/${process.pid}/environ 2>&1 | head -c 40`);
    const [xvfbs, uids] = r.out.split('\n');
    expect(xvfbs).toBe('1'); // its own X server only
    const aUid = lookupUser(userNameOf(dataDir, A.machineId))!.uid;
    expect(uids!.split(',').filter(Boolean).map(Number).filter((u) => u !== aUid && u !== 0)).toEqual([]);
    expect(r.out).toContain('no-such');
    expect(r.out).not.toMatch(/DATABASE_URL|PATH=/);
  });

  it('A cannot open B’s X display, VNC or agent sockets, and its own display needs the cookie', () => {
    const bRun = runDirOf(dataDir, B.machineId);
    const r = inA(
      `ls /tmp/.X11-unix; ls ${bRun} 2>&1 | head -1; ` +
        `/usr/bin/python3 -c "import socket;s=socket.socket(socket.AF_UNIX);s.connect('${bRun}/vnc.sock')" 2>&1 | tail -1; ` +
        `XAUTHORITY=/dev/null xwininfo -root -display :0 >/dev/null 2>&1 && echo display-open || echo display-refused; ` +
        `XAUTHORITY=/run/hyperdesk/xauth xwininfo -root -display :0 >/dev/null 2>&1 && echo own-display-ok`,
    );
    expect(r.out.split('\n')[0]).toBe('X0');
    expect(r.out).toContain('No such file or directory');
    expect(r.out).toContain('FileNotFoundError');
    expect(r.out).toContain('display-refused');
    expect(r.out).toContain('own-display-ok');
  });

  it('A cannot reach the host’s PostgreSQL or the API on loopback, directly or through the NAT gateway', () => {
    const probe = (host: string, port: number) => `timeout 3 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null && echo open-${host}-${port} || echo closed-${host}-${port}`;
    const r = inA([probe('127.0.0.1', 5432), probe('127.0.0.1', apiPort), probe('10.0.2.2', 5432), probe('10.0.2.2', apiPort), 'ip -o route'].join('; '));
    expect(r.out).not.toContain('open-');
    expect(r.out.match(/closed-/g)).toHaveLength(4);
    expect(r.out).toContain('default via 10.0.2.2 dev tap0'); // with MACHINE_EGRESS=internet it has a way out
  });

  it('with MACHINE_EGRESS=none a desktop has no route out: only loopback', () => {
    const r = inSandbox(offlineDir, C.machineId, 'ip -o link | cut -d: -f2 | tr -d " \\n"; echo; ip -o route; echo routes-end');
    expect(r.out).toBe('lo\nroutes-end\n');
  });

  it('a restarted provider adopts the running sandboxes and removes orphans', async () => {
    const D = { machineId: `d-${randomUUID()}`, name: 'Desk D' };
    await online.start(D);
    const dUser = userNameOf(dataDir, D.machineId);
    // D's machine disappears (its folder deleted while it runs): nothing could adopt it.
    rmSync(path.join(dataDir, 'machines', D.machineId), { recursive: true, force: true });
    const restarted = createLocalProvider({ dataDir, egress: 'internet', limits: { memoryMb: MEMORY_MB, pids: PIDS } });
    expect((await restarted.list()).sort()).toEqual([A.machineId, B.machineId].sort());
    expect((await restarted.describe(A.machineId)).state).toBe('running');
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === D.machineId)).toEqual([]);
    expect(lookupUser(dUser)).toBeNull();
    expect(machineCgroup(dUser).pids()).toEqual([]);
    rmSync(path.join(dataDir, 'homes', D.machineId), { recursive: true, force: true });
  });

  it('a (bounded) fork bomb in A hits A’s process limit; B keeps running and can start processes', async () => {
    // Forks up to twice the limit (children sleep, then exit): a bomb that cannot outlive the test.
    const bomb = [
      'import os, time',
      'n = 0',
      `for i in range(${PIDS * 2}):`,
      '    try:',
      '        pid = os.fork()',
      '    except OSError:',
      '        break',
      '    if pid == 0:',
      '        os.closerange(0, 3); time.sleep(20); os._exit(0)',
      '    n += 1',
      'print(n)',
    ].join('\n');
    const r = inA(`/usr/bin/python3 -c '${bomb}'`);
    expect(Number(r.out.trim())).toBeGreaterThan(0);
    expect(Number(r.out.trim())).toBeLessThan(PIDS);
    expect(machineCgroup(userNameOf(dataDir, A.machineId)).pids().length).toBeLessThanOrEqual(PIDS);
    expect((await online.describe(B.machineId)).state).toBe('running');
    expect(inSandbox(dataDir, B.machineId, 'echo forked').out.trim()).toBe('forked');
    // The bomb's children fill A's process table: end them from outside.
    for (const p of desktopProcesses(dataDir).filter((x) => x.machineId === A.machineId && x.comm === 'python3')) signal(p.pid, 'SIGKILL');
    await until('bomb gone', () => !desktopProcesses(dataDir).some((x) => x.machineId === A.machineId && x.comm === 'python3'));
    expect((await online.describe(A.machineId)).state).toBe('running');
  });

  it('a memory hog in A stops A with a clear reason; B keeps running', async () => {
    inA('timeout 60 bash -c "head -c 4000m /dev/zero | tail" >/dev/null 2>&1; true');
    const d = await until('A stopped', async () => {
      const x = await online.describe(A.machineId);
      return x.state === 'stopped' ? x : null;
    });
    expect(d.reason).toBe(`The machine ran out of memory (limit ${MEMORY_MB} MB) and was stopped.`);
    expect(desktopProcesses(dataDir).filter((p) => p.machineId === A.machineId)).toEqual([]);
    expect((await online.describe(B.machineId)).state).toBe('running');
    expect((await online.describe(A.machineId)).reason).toBe(d.reason); // it stays explained
  });

  it('when the X server of a running desktop is killed, the provider reports it stopped with the reason', async () => {
    const bX = desktopProcesses(dataDir).find((p) => p.machineId === B.machineId && p.comm === 'Xvfb')!;
    signal(bX.pid, 'SIGKILL');
    const d = await until('B stopped', async () => {
      const x = await online.describe(B.machineId);
      return x.state === 'stopped' ? x : null;
    });
    expect(d.reason).toBe('The X server of the desktop ended, so the machine was stopped.');
    expect(readFileSync(path.join(dataDir, 'machines', B.machineId, 'exit'), 'utf8').trim()).toBe('10');
  });
});

describe('sandboxed local desktops: streaming agent and disk quota', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hd-sandbox-agent-'));
  const agentDir = mkdtempSync(path.join(tmpdir(), 'hd-agent-'));
  const M = { machineId: `m-${randomUUID()}`, name: 'Agent desk' };
  let provider: MachineProvider;

  beforeAll(() => {
    // A stand-in for server/agent/agent.py (another branch): it answers one JSON line about where it runs.
    writeFileSync(
      path.join(agentDir, 'agent.py'),
      [
        'import json, os, socket, sys',
        'a = sys.argv[1:]',
        'opt = lambda k: a[a.index(k) + 1]',
        'x = socket.socket(socket.AF_UNIX)',
        'x.connect("/tmp/.X11-unix/X0")',
        'srv = socket.socket(socket.AF_UNIX)',
        'srv.bind(opt("--socket"))',
        'srv.listen(1)',
        'while True:',
        '    c, _ = srv.accept()',
        '    info = dict(argv=a, uid=os.getuid(), display=os.environ.get("DISPLAY"), cookie=os.path.getsize(opt("--xauthority")),',
        '                pids=sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), env=sorted(os.environ))',
        '    c.sendall((json.dumps(info) + "\\n").encode())',
        '    c.close()',
      ].join('\n'),
    );
    chmodSync(agentDir, 0o755);
    provider = createLocalProvider({ dataDir, egress: 'none', agentScript: path.join(agentDir, 'agent.py'), limits: { diskMb: 5 }, diskCheckEveryMs: 0 });
  });
  afterAll(async () => {
    await provider.destroy(M.machineId);
    expect(desktopProcesses(dataDir)).toEqual([]);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(agentDir, { recursive: true, force: true });
  });

  it('runs the agent beside the desktop as the machine’s user, with the X socket and cookie; describe reports its socket', async () => {
    await provider.start(M);
    const d = await until('agent socket', async () => {
      const x = await provider.describe(M.machineId);
      return x.state === 'running' && x.agent ? x : null;
    });
    expect(d.agent?.ref.path).toBe(path.join(runDirOf(dataDir, M.machineId), 'agent.sock'));
    const line = await new Promise<string>((resolve, reject) => {
      let got = '';
      const s = d.agent!.open();
      s.on('data', (b) => (got += b.toString()));
      s.on('end', () => resolve(got));
      s.on('error', reject);
    });
    const info = JSON.parse(line) as { argv: string[]; uid: number; display: string; cookie: number; pids: number[]; env: string[] };
    expect(info.argv).toEqual([
      '--display', ':0', '--xauthority', '/run/hyperdesk/xauth', '--socket', '/run/hyperdesk/agent.sock',
      '--pulse-server', 'unix:/run/hyperdesk/pulse/native',
    ]);
    // The agent reaches the desktop's sound server too.
    await until('pulse socket', () => existsSync(path.join(runDirOf(dataDir, M.machineId), 'pulse', 'native')));
    expect(inSandbox(dataDir, M.machineId, 'PULSE_SERVER=unix:/run/hyperdesk/pulse/native pactl list short sinks').out).toContain('desktop');
    expect(info.uid).toBe(lookupUser(userNameOf(dataDir, M.machineId))!.uid);
    expect(info.display).toBe(':0');
    expect(info.cookie).toBeGreaterThan(16);
    expect(info.pids.length).toBeLessThan(5); // its own PID namespace
    expect(info.env).not.toContain('DATABASE_URL');
  });

  it('a home past its disk quota stops the machine with the reason', async () => {
    inSandbox(dataDir, M.machineId, 'head -c 8000000 /dev/zero > ~/big.bin');
    const d = await until('stopped for disk', async () => {
      const x = await provider.describe(M.machineId);
      return x.state === 'stopped' ? x : null;
    });
    expect(d.reason).toBe("The machine's home folder grew past its disk quota (5 MB) and the machine was stopped.");
  });
});
