import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from './harness';
import type { MachineProvider } from '../src/modules/machines/providers/types';
import { fakeProvider, fakeRfbServer, machineRow, seedMachine, seedUser, signFor } from './machines-fixtures';

const TOKEN = 'metrics-token-0123456789';
const DAY = 86_400_000;

/** The value of one sample line (`name{labels} value`), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(',').filter(Boolean);
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(m[3]);
  }
  return 0;
}

describe('GET /metrics', () => {
  let s: TestServer;
  let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
  let provider: ReturnType<typeof fakeProvider>;
  const scrape = async () => {
    const res = await s.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' });
    expect(res.statusCode).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    rfb = await fakeRfbServer();
    provider = fakeProvider(rfb.port);
    s = await startTestServer({ env: { METRICS_TOKEN: TOKEN }, overrides: { machineProvider: provider } });
  });
  afterAll(async () => {
    await s.close();
    await rfb.close();
  });

  it("reports each host's state and storage pool from the provider in one read, and none when the engine fails", async () => {
    const host = (name: string, online: boolean, storageUsed: number | null, storageTotal: number | null) => ({
      name, online, message: '', cpus: null, memoryTotal: null, memoryUsed: null, load: null, gpus: [], storageUsed, storageTotal, machines: [],
    });
    let reads = 0;
    const engine = provider as { fleet?: MachineProvider['fleet'] };
    engine.fleet = async () => {
      reads++;
      return [host('a', true, 9e9, 40e9), host('b', false, null, null)];
    };
    let text = await scrape();
    expect(reads).toBe(1);
    expect(sample(text, 'hyperdesk_host_up', { host: 'a' })).toBe(1);
    expect(text).toContain('hyperdesk_host_up{host="b"} 0');
    expect(sample(text, 'hyperdesk_host_storage_used_bytes', { host: 'a' })).toBe(9e9);
    expect(sample(text, 'hyperdesk_host_storage_size_bytes', { host: 'a' })).toBe(40e9);
    expect(text).not.toContain('hyperdesk_host_storage_used_bytes{host="b"}'); // an offline host's pool is unknown
    // The next scrape reads again; an engine that does not answer leaves the families empty, the scrape answers.
    engine.fleet = async () => {
      reads++;
      throw new Error('engine unreachable');
    };
    text = await scrape();
    expect(reads).toBe(2);
    expect(text).toContain('# TYPE hyperdesk_host_up gauge');
    expect(text).not.toContain('hyperdesk_host_up{');
    delete engine.fleet;
  });

  it('names every family per Prometheus conventions', async () => {
    const text = await scrape();
    for (const family of [
      'hyperdesk_machines',
      'hyperdesk_machine_start_seconds',
      'hyperdesk_machine_stop_seconds',
      'hyperdesk_reconciler_errors_total',
      'hyperdesk_ledger_debited_minutes_total',
      'hyperdesk_orders',
      'hyperdesk_webhook_deliveries_total',
      'hyperdesk_webhook_delivery_retries_total',
      'hyperdesk_http_request_duration_seconds',
      'hyperdesk_connect_sessions_open',
      'hyperdesk_host_up',
      'hyperdesk_host_storage_used_bytes',
      'hyperdesk_host_storage_size_bytes',
    ]) {
      expect(text, family).toContain(`# TYPE ${family} `);
    }
    expect(text).toMatch(/# TYPE hyperdesk_machine_start_seconds histogram/);
    expect(sample(text, 'hyperdesk_orders', { status: 'paid' })).toBe(0);
  });

  it('moves with what happens: a start, a stop, a metered minute, machines by state, HTTP latency by route pattern', async () => {
    const before = await scrape();
    const u = await seedUser(s.app.ctx.db);
    const id = await seedMachine(s.app.ctx.db, u.uid);
    await s.app.ctx.ledger.credit(s.app.ctx.db, { machineId: id, minutes: 60, expiresAt: new Date(Date.now() + DAY), key: `t:${id}` });
    const token = await signFor(s.app.ctx.tokens, u);

    expect((await s.call('POST', '/v1/user/slot', { token, body: { packId: id } })).status).toBe(200);
    for (let i = 0; i < 5 && (await machineRow(s.app.ctx.db, id)).observed !== 'online'; i++) await s.app.ctx.machines.reconciler.runOnce();
    expect((await machineRow(s.app.ctx.db, id)).observed).toBe('online');
    const online = await scrape();
    expect(sample(online, 'hyperdesk_machine_start_seconds_count')).toBe(sample(before, 'hyperdesk_machine_start_seconds_count') + 1);
    expect(sample(online, 'hyperdesk_machines', { observed: 'online', desired: 'running' })).toBe(1);

    expect((await s.app.ctx.ledger.debitMinute(s.app.ctx.db, { machineId: id, key: `meter:${id}:1`, at: new Date() })).debited).toBe(true);
    await s.app.ctx.ledger.debitMinute(s.app.ctx.db, { machineId: id, key: `meter:${id}:1`, at: new Date() }); // a replay is no new minute
    expect(sample(await scrape(), 'hyperdesk_ledger_debited_minutes_total')).toBe(sample(online, 'hyperdesk_ledger_debited_minutes_total') + 1);

    expect((await s.call('POST', '/v1/user/slot', { token, body: { packId: id, terminate: true } })).status).toBe(200);
    await s.app.ctx.machines.reconciler.runOnce();
    expect((await machineRow(s.app.ctx.db, id)).observed).toBe('offline');

    // Paths with ids are labelled by their pattern, never the raw URL.
    const checkoutId = randomUUID();
    await s.call('GET', `/checkout/${checkoutId}`);

    const after = await scrape();
    expect(sample(after, 'hyperdesk_machine_stop_seconds_count')).toBe(sample(before, 'hyperdesk_machine_stop_seconds_count') + 1);
    expect(sample(after, 'hyperdesk_machines', { observed: 'offline', desired: 'stopped' })).toBe(1);
    const slotCount = { method: 'POST', route: '/v1/user/slot', status_code: '200' };
    expect(sample(after, 'hyperdesk_http_request_duration_seconds_count', slotCount)).toBe(
      sample(before, 'hyperdesk_http_request_duration_seconds_count', slotCount) + 2,
    );
    expect(after).toContain('route="/checkout/:id"');
    expect(after).not.toContain(checkoutId);
  });

  it('counts failed webhook deliveries and their retries', async () => {
    const before = await scrape();
    const { outbox } = s.app.ctx.billing;
    outbox.setTarget(() => 'http://127.0.0.1:1/refused');
    const eventId = `evt_${randomUUID()}`;
    await outbox.enqueue(s.app.ctx.db, { provider: 'builtin', eventId, payload: '{}' });
    expect(await outbox.deliver([eventId])).toBe(0);
    const after = await scrape();
    expect(sample(after, 'hyperdesk_webhook_deliveries_total', { provider: 'builtin', outcome: 'failed' })).toBe(
      sample(before, 'hyperdesk_webhook_deliveries_total', { provider: 'builtin', outcome: 'failed' }) + 1,
    );
    expect(sample(after, 'hyperdesk_webhook_delivery_retries_total', { provider: 'builtin' })).toBe(
      sample(before, 'hyperdesk_webhook_delivery_retries_total', { provider: 'builtin' }) + 1,
    );
  });

  it('refuses a scraper off this host without the token, and lets one in with it', async () => {
    const remote = { method: 'GET' as const, url: '/metrics', remoteAddress: '203.0.113.9' };
    const refused = await s.app.inject(remote);
    expect(refused.statusCode).toBe(401);
    expect(refused.body).not.toContain('hyperdesk_');
    expect((await s.app.inject({ ...remote, headers: { authorization: 'Bearer wrong-token-wrong-token' } })).statusCode).toBe(401);
    // Loopback through a proxy (X-Forwarded-For) is not "this host".
    expect((await s.app.inject({ ...remote, remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } })).statusCode).toBe(401);
    const allowed = await s.app.inject({ ...remote, headers: { authorization: `Bearer ${TOKEN}` } });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.body).toContain('hyperdesk_machines');
  });

  it('without METRICS_TOKEN, only loopback is served', async () => {
    const other = await startTestServer();
    try {
      expect((await other.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9' })).statusCode).toBe(404);
      expect((await other.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode).toBe(404);
      expect((await other.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });
});
