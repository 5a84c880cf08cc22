import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LxdClient } from '../src/modules/machines/providers/lxd/client';
import { createLxdProvider } from '../src/modules/machines/providers/lxd/provider';
import { rfbAnswers } from '../src/modules/machines/providers/rfb';
import type { Endpoint, MachineProvider, ObservedDesktop } from '../src/modules/machines/providers/types';
import { lxdDeployment, type LxdDeployment } from './lxd-fixtures';
import { until } from './machines-desktops';

/** The desktop's end of the link, as the tenant's shell finds it. */
const LINK = "pgrep -u user -f '^python3 -c .*SOCKETS'";

/** Sends `data` through a stream and reads as many bytes back (an echo at the other end), reading slowly at first. */
function echoed(stream: Duplex, data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const got: Buffer[] = [];
    let n = 0;
    stream.on('error', reject);
    stream.on('close', () => reject(new Error(`closed after ${n} of ${data.length} bytes`)));
    stream.pause(); // the window must hold the sender back while nobody reads
    setTimeout(() => stream.resume(), 500);
    stream.on('data', (c: Buffer) => {
      got.push(c);
      n += c.length;
      if (n >= data.length) resolve(Buffer.concat(got));
    });
    stream.once('connect', () => stream.write(data));
  });
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * A desktop's link on the host's real LXD (./link.ts): viewers' streams and the reconciler's looks go through one
 * long-lived exec per desktop, not an exec each; what the tenant can do to the link (end it, stop it, write into it)
 * only sends its own desktop's streams back to an exec each; a hung VNC server is still found and stopped.
 */
describe('lxd provider: desktop links', () => {
  let d: LxdDeployment;
  let provider: MachineProvider;
  let execs = 0;
  const m = { machineId: randomUUID(), name: 'Linked' };
  const look = () => provider.describe(m.machineId);
  /** Execs `what` started. */
  const execsOf = async <T,>(what: () => Promise<T>): Promise<{ value: T; execs: number }> => {
    const before = execs;
    const value = await what();
    return { value, execs: execs - before };
  };
  const vnc = async (): Promise<Endpoint> => {
    const seen = await look();
    if (seen.state !== 'running' || !seen.endpoint) throw new Error(`desktop ${seen.state}`);
    return seen.endpoint;
  };
  const linked = () => until('a look and a viewer without an exec', async () => (await execsOf(async () => rfbAnswers(await vnc(), 5000))).execs === 0, 60_000);

  beforeAll(async () => {
    d = await lxdDeployment();
    const counting: LxdClient = {
      ...d.lxd,
      begin: (method, p, body) => {
        if (p.endsWith('/exec')) execs++;
        return d.lxd.begin(method, p, body);
      },
    };
    provider = createLxdProvider({ lxd: counting, pool: 'hyperdesk', network: 'hdbr0', image: d.image, limits: { cpus: 1, memoryMb: 1024, pids: 400, diskMb: 200, rootMb: 4096 } });
    await provider.start(m);
    await until('desktop answers', async () => (await look()).state === 'running', 600_000);
  }, 3_600_000); // a fresh machine builds the desktop image first (host-setup.sh)
  afterAll(async () => {
    await provider?.destroy(m.machineId).catch(() => undefined);
    await d?.close();
  });

  it('looks and 20 viewers at once cost no exec: each viewer gets the VNC greeting through the link', async () => {
    await linked();
    const { value, execs: n } = await execsOf(async () => {
      const ep = await vnc();
      return Promise.all(Array.from({ length: 20 }, () => rfbAnswers(ep, 10_000)));
    });
    expect(value).toEqual(Array(20).fill(true));
    expect(n).toBe(0);
  }, 120_000);

  it('carries 4 MiB each way intact to a socket in the desktop, and holds the sender to its window while nobody reads', async () => {
    // The tenant's own echo server in the agent's place (the desktop's user owns the socket).
    await d.shell(m.machineId, "pkill -f '[a]gent.py'; rm -f /run/hyperdesk/agent.sock; (setsid socat UNIX-LISTEN:/run/hyperdesk/agent.sock,fork EXEC:cat >/dev/null 2>&1 &) ; sleep 0.3");
    const seen = await look();
    if (seen.state !== 'running' || !seen.agent) throw new Error('no agent endpoint');
    const data = randomBytes(4 * 1024 * 1024);
    const { value, execs: n } = await execsOf(async () => {
      const stream = seen.agent!.open();
      try {
        return await echoed(stream, data);
      } finally {
        stream.destroy();
      }
    });
    expect(sha(value.subarray(0, data.length))).toBe(sha(data));
    expect(n).toBe(0);
  }, 120_000);

  it("a tenant cannot write into the link's stream (its frames are checked anyway: link.test.ts)", async () => {
    await linked();
    const wrote = await d.shell(m.machineId, `pid=$(${LINK} | head -1); [ -n "$pid" ] && printf '\\002\\000\\000\\000\\001\\001\\000\\000\\000' > /proc/$pid/fd/1`);
    expect(wrote.code).not.toBe(0);
    expect(wrote.out).toContain('Permission denied');
    await linked();
  }, 120_000);

  it('a tenant who ends or stops the link gets exec probes and a new link, never a stopped machine', async () => {
    await linked();
    await d.shell(m.machineId, `pkill -STOP -f '^python3 -c .*SOCKETS'; true`);
    // A viewer that came within the second before the link was found silent waits in vain; the next get an exec.
    await until('a viewer through an exec of its own', async () => {
      const r = await execsOf(async () => rfbAnswers(await vnc(), 5000));
      return r.value && r.execs > 0;
    }, 60_000);
    await d.shell(m.machineId, `pkill -KILL -f '^python3 -c .*SOCKETS'; true`);
    await linked();
    const seen: ObservedDesktop = await look();
    expect(seen.state).toBe('running');
  }, 180_000);

  it('a desktop starting again is looked at through the link started with it: no exec per look while it comes up', async () => {
    await provider.stop(m.machineId);
    await until('stopped', async () => (await look()).state === 'stopped', 60_000);
    const { value: looks, execs: n } = await execsOf(async () => {
      await provider.start(m);
      let count = 0;
      await until('running again', async () => (count++, (await look()).state === 'running'), 120_000, 50);
      return count;
    });
    expect(looks).toBeGreaterThan(1);
    expect(n).toBe(1); // the link's own
  }, 180_000);

  it('a desktop whose VNC server hangs is found hung and stopped', async () => {
    await d.shell(m.machineId, 'pkill -STOP -x Xvnc');
    await until('stopped as hung', async () => {
      const seen = await look();
      return seen.state === 'stopped' && seen.reason === 'The desktop stopped responding, so the machine was stopped.';
    }, 120_000);
  }, 180_000);
});
