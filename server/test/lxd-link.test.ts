import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LxdClient } from '../src/modules/machines/providers/lxd/client';
import { createLxdProvider } from '../src/modules/machines/providers/lxd/provider';
import type { MachineProvider, ObservedDesktop } from '../src/modules/machines/providers/types';
import { lxdDeployment, type LxdDeployment } from './lxd-fixtures';
import { until } from './machines-desktops';

/**
 * The reconciler's look at an online desktop on the host's real LXD: once the desktop's watch runs, a look costs no
 * exec; a tenant who ends the watch only makes the next look probe through an exec (and gets a new watch); a desktop
 * whose VNC server hangs is still found hung and stopped with the reason the dashboard shows.
 */
describe('lxd provider: desktop watches', () => {
  let d: LxdDeployment;
  let provider: MachineProvider;
  let execs = 0;
  const m = { machineId: randomUUID(), name: 'Watched' };
  const look = () => provider.describe(m.machineId);
  /** Execs a look started. */
  const execsOf = async (): Promise<{ seen: ObservedDesktop; execs: number }> => {
    const before = execs;
    const seen = await look();
    return { seen, execs: execs - before };
  };

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

  it('a look at a watched desktop costs no exec', async () => {
    await until('a look without an exec', async () => (await execsOf()).execs === 0, 60_000);
    for (let i = 0; i < 3; i++) {
      const { seen, execs: n } = await execsOf();
      expect(seen.state).toBe('running');
      expect(n).toBe(0);
    }
  }, 120_000);

  it('a tenant who ends the watch gets an exec probe and a new watch, not a stopped machine', async () => {
    await d.shell(m.machineId, "pkill -f '[w]hile :; do if timeout' ; true");
    const probed = await until('a look that probes through an exec', async () => {
      const r = await execsOf();
      expect(r.seen.state).toBe('running');
      return r.execs > 0;
    }, 60_000);
    expect(probed).toBeTruthy();
    await until('watched again', async () => (await execsOf()).execs === 0, 60_000);
  }, 180_000);

  it('a desktop whose VNC server hangs is found hung and stopped', async () => {
    await d.shell(m.machineId, 'pkill -STOP -x x11vnc');
    await until('stopped as hung', async () => {
      const seen = await look();
      return seen.state === 'stopped' && seen.reason === 'The desktop stopped responding, so the machine was stopped.';
    }, 120_000);
  }, 180_000);
});
