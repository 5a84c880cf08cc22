import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLxdProvider, HOST_LOST } from '../src/modules/machines/providers/lxd/provider';
import type { MachineProvider } from '../src/modules/machines/providers/types';
import { startTestServer, type TestServer } from './harness';
import { createUser } from './identity-helpers';
import { machineRow, seedMachine, seedUser, signFor } from './machines-fixtures';
import { until } from './machines-desktops';
import { CLUSTER_NETWORK, CLUSTER_POOL, twoMemberCluster, type TestCluster } from './lxd-cluster-fixtures';

const DAY = 86_400_000;

/**
 * The lxd provider on a two-member LXD cluster built on this one machine (two new daemons, each in its own network
 * and mount namespace; the host's daemon is not touched): new machines are placed on both members by free capacity;
 * when a member dies its machines are marked stopped with the reason the dashboard shows, and their next Start runs
 * them on the member that is left. Through the real API and reconciler.
 */
describe('lxd provider on a two-member cluster', () => {
  let c: TestCluster;
  let s: TestServer;
  let provider: MachineProvider;
  const db = () => s.database.db;
  const pass = () => s.app.ctx.machines.reconciler.runOnce();
  const users: { id: string; token: string }[] = [];

  beforeAll(async () => {
    const t0 = Date.now();
    c = await twoMemberCluster();
    console.log(`cluster ready in ${Math.round((Date.now() - t0) / 1000)} s`);
    provider = createLxdProvider({
      lxd: c.lxd,
      pool: CLUSTER_POOL,
      network: CLUSTER_NETWORK,
      image: 'hyperdesk-desktop',
      // No member has this volume (host-setup did not run on them): every desktop keeps its own /usr and still starts.
      usrVolume: 'usr-on-no-member',
      limits: { cpus: 1, memoryMb: 512, pids: 300, diskMb: 100, rootMb: 4096 },
    });
    s = await startTestServer({ overrides: { machineProvider: provider } });
  }, 600_000);
  afterAll(async () => {
    // The server first, its LXD connections cut so a pass waiting on the dead member ends at once; then the cluster.
    const t0 = Date.now();
    c?.lxd.close();
    await s?.close();
    await c?.close();
    console.log(`server and cluster removed in ${Math.round((Date.now() - t0) / 1000)} s`);
  }, 180_000);

  async function customer() {
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid);
    await s.app.ctx.ledger.credit(db(), { machineId: id, minutes: 600, expiresAt: new Date(Date.now() + 30 * DAY), key: `t:${id}` });
    const token = await signFor(s.app.ctx.tokens, u);
    users.push({ id, token });
    return { id, token };
  }
  const startOf = (token: string, id: string) => s.call('POST', '/v1/user/slot', { token, body: { packId: id } });
  const allOnline = (ids: string[], ms = 240_000) =>
    until(
      'machines online',
      async () => {
        await pass();
        const rows = await Promise.all(ids.map((id) => machineRow(db(), id)));
        return rows.every((r) => r.observed === 'online');
      },
      ms,
      500,
    );
  const memberOf = async (id: string) => c.locationOf(((await machineRow(db(), id)).providerRef as { instance: string }).instance);

  it('places new machines on both members, by free capacity', async () => {
    const t0 = Date.now();
    const cs = [await customer(), await customer()];
    for (const x of cs) expect((await startOf(x.token, x.id)).status).toBe(200);
    await allOnline(cs.map((x) => x.id));
    console.log(`2 machines online on the cluster in ${Math.round((Date.now() - t0) / 1000)} s`);
    const where = await Promise.all(cs.map((x) => memberOf(x.id)));
    // Both members were empty: the second desktop goes where the first one's limits do not count yet.
    expect(where.sort()).toEqual([...c.members].sort());
  }, 400_000);

  it('a stopped machine starts again where it is, without asking LXD for the home it already mounts', async () => {
    const u = users[0]!;
    const member = await memberOf(u.id);
    expect((await s.call('POST', '/v1/user/slot', { token: u.token, body: { packId: u.id, terminate: true } })).status).toBe(200);
    const stopped = async () => {
      await pass();
      return (await machineRow(db(), u.id)).observed === 'offline';
    };
    await until('the machine stopped', stopped, 120_000, 500);
    const sent = vi.spyOn(c.lxd, 'send');
    try {
      expect((await startOf(u.token, u.id)).status).toBe(200);
      await allOnline([u.id]);
      // The volume POST makes LXD read every instance of the project on its one database connection.
      expect(sent.mock.calls.filter(([method, p]) => method === 'POST' && p.includes('/storage-pools/'))).toEqual([]);
      expect(sent.mock.calls.some(([method, p]) => method === 'PUT' && p.endsWith('/state'))).toBe(true);
    } finally {
      sent.mockRestore();
    }
    expect(await memberOf(u.id)).toBe(member);
  }, 300_000);

  it("a member killed: its machines are marked stopped with the dashboard's reason, the others keep running; Start runs them on the member left", async () => {
    const on = await Promise.all(users.map(async (u) => ({ ...u, member: await memberOf(u.id) })));
    const lost = on.filter((u) => u.member === c.members[1]);
    const kept = on.filter((u) => u.member === c.members[0]);
    const t0 = Date.now();
    await c.killMember(c.members[1]);
    await until(
      'machines of the lost member marked',
      async () => {
        await pass();
        const rows = await Promise.all(lost.map((u) => machineRow(db(), u.id)));
        return rows.every((r) => r.desired === 'stopped' && r.observed === 'offline');
      },
      120_000,
      500,
    );
    console.log(`lost member's machines marked ${Math.round((Date.now() - t0) / 1000)} s after the kill`);
    for (const u of lost) {
      expect(await machineRow(db(), u.id)).toMatchObject({ stoppedBy: 'host-lost', stopReason: HOST_LOST });
      // The dashboard says why.
      const balance = await s.call('GET', '/v1/user/wallet/balance', { token: u.token });
      expect(JSON.stringify(balance.body)).toContain(HOST_LOST);
    }
    for (const u of kept) expect(await machineRow(db(), u.id)).toMatchObject({ desired: 'running', observed: 'online' });

    // The operator's Fleet page: one member offline, the other with every machine.
    const admin = await createUser(s, { name: 'Olga Operator', admin: true });
    const fleet = await s.call('GET', '/v1/admin/fleet/members', { token: admin.token });
    expect(fleet.status).toBe(200);
    type Host = { name: string; online: boolean; storageUsed: number | null; storageTotal: number | null; machines: { id: string }[] };
    const byName = Object.fromEntries((fleet.body.members as Host[]).map((m) => [m.name, m]));
    expect(byName[c.members[1]]).toMatchObject({ online: false, storageUsed: null, storageTotal: null });
    expect(byName[c.members[0]]).toMatchObject({ online: true });
    // The member's own pool (each member has its own on a local pool): its desktops' roots and homes at least.
    expect(byName[c.members[0]]!.storageTotal).toBeGreaterThan(byName[c.members[0]]!.storageUsed!);
    expect(byName[c.members[0]]!.storageUsed).toBeGreaterThan(0);
    expect(byName[c.members[0]]!.machines.map((m) => m.id).sort()).toEqual(kept.map((u) => u.id).sort());

    const t1 = Date.now();
    for (const u of lost) expect((await startOf(u.token, u.id)).status).toBe(200);
    await allOnline(lost.map((u) => u.id));
    console.log(`restarted on the member left in ${Math.round((Date.now() - t1) / 1000)} s`);
    for (const u of lost) {
      const ref = (await machineRow(db(), u.id)).providerRef as { instance: string };
      expect(ref.instance).toBe(`hd-${u.id}-g1`);
      expect(await memberOf(u.id)).toBe(c.members[0]);
    }
  }, 400_000);

  it('the lost member back: LXD restarts the old instance there, the provider deletes it, the machine runs on', async () => {
    const lost: { id: string; token: string }[] = [];
    for (const u of users) if (((await machineRow(db(), u.id)).providerRef as { instance: string }).instance.endsWith('-g1')) lost.push(u);
    expect(lost.length).toBeGreaterThan(0);
    const t0 = Date.now();
    await c.reviveMember(c.members[1]);
    await until(
      'the replaced instances deleted',
      async () => {
        await pass();
        const where = await Promise.all(lost.map((u) => c.locationOf(`hd-${u.id}`)));
        return where.every((w) => w === '');
      },
      240_000,
      1000,
    );
    console.log(`replaced instances deleted ${Math.round((Date.now() - t0) / 1000)} s after the member came back`);
    for (const u of lost) {
      expect(await machineRow(db(), u.id)).toMatchObject({ desired: 'running', observed: 'online' });
      expect(await memberOf(u.id)).toBe(c.members[0]);
    }
  }, 400_000);
});
