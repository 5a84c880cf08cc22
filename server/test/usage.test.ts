import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSessions, orders } from '../src/db/schema/index';
import { seedCourse, seedUser } from '../src/modules/courses/fixtures/seed';
import { CONSUMER_TAX } from '../src/modules/usage/tax';
import { startTestServer, type TestServer } from './harness';
import { seedMachine } from './machines-fixtures';

/**
 * Usage history and receipts (issue 22.4): runs are the metered minutes grouped into unbroken stretches; an
 * instructor also sees each student's sessions; both export as CSV. Receipts list the caller's paid orders with the
 * country's VAT/GST included, as JSON and PDF. Everything else's is a 404.
 */

const MIN = 60_000;
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.close());

async function user(opts: { instructor?: boolean; name?: string } = {}) {
  const p = await seedUser(s.app.ctx.db, opts);
  return { p, token: await s.app.ctx.tokens.sign(p) };
}

/** Charges the minutes [from, from + n) of a machine as the meter does (one keyed debit per minute). */
async function meter(machineId: string, from: number, n: number) {
  await s.app.ctx.ledger.credit(s.app.ctx.db, { machineId, minutes: 600, expiresAt: new Date(Date.now() + 30 * 86_400_000), key: `credit-${machineId}-${from}` });
  for (let m = from; m < from + n; m++) {
    const r = await s.app.ctx.ledger.debitMinute(s.app.ctx.db, { machineId, key: `meter:${machineId}:${m}`, at: new Date() });
    expect(r.debited).toBe(true);
  }
}

async function paidOrder(userId: string, o: { region: string; amountMinor: number; currency: string; kind?: 'single' | 'course'; status?: 'paid' | 'pending' }) {
  const id = randomUUID();
  await s.app.ctx.db.insert(orders).values({
    id, userId, kind: o.kind ?? 'single', region: o.region, platform: 'Unreal Engine', hours: 10, vms: 1, amountMinor: o.amountMinor, currency: o.currency,
    status: o.status ?? 'paid', provider: 'builtin', successUrl: 'http://localhost/success', cancelUrl: 'http://localhost/failed', paidAt: new Date(),
  });
  return id;
}

describe('GET /v1/user/usage', () => {
  it("groups a machine's metered minutes into runs, newest first, and exports them as CSV", async () => {
    const owner = await user();
    const id = await seedMachine(s.app.ctx.db, owner.p.uid, 'My "Machine", DE');
    const base = Math.floor(Date.parse('2026-03-01T10:00:00Z') / MIN);
    await meter(id, base, 90); // 10:00–11:30
    await meter(id, base + 240, 30); // 14:00–14:30
    const res = await s.call('GET', `/v1/user/usage?packId=${id}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      machineName: 'My "Machine", DE',
      region: 'DE',
      totalHours: 2,
      runs: [
        { machineName: 'My "Machine", DE', start: '2026-03-01T14:00:00.000Z', end: '2026-03-01T14:30:00.000Z', hours: 0.5 },
        { machineName: 'My "Machine", DE', start: '2026-03-01T10:00:00.000Z', end: '2026-03-01T11:30:00.000Z', hours: 1.5 },
      ],
    });
    expect(res.body.students).toBeUndefined();

    const csv = await fetch(`${s.base}/v1/user/usage.csv?packId=${id}`, { headers: { idtoken: owner.token } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="My-Machine-DE-usage.csv"');
    expect(await csv.text()).toBe(
      'machine,start,end,hours\r\n' +
        '"My ""Machine"", DE",2026-03-01T14:00:00.000Z,2026-03-01T14:30:00.000Z,0.5\r\n' +
        '"My ""Machine"", DE",2026-03-01T10:00:00.000Z,2026-03-01T11:30:00.000Z,1.5\r\n',
    );
  });

  it("shows an instructor each student's sessions on the course's machines, with CSV", async () => {
    const teacher = await user({ instructor: true });
    const student = await user();
    const course = await seedCourse(s.app.ctx.db, { ownerId: teacher.p.uid, vms: 2, startAt: new Date(Date.now() - 86_400_000), endAt: new Date(Date.now() + 86_400_000) });
    const [a, b] = course.machineIds as [string, string];
    const base = Math.floor(Date.parse('2026-03-02T09:00:00Z') / MIN);
    await meter(a, base, 60);
    await meter(b, base, 45);
    const opened = new Date('2026-03-02T09:05:00Z');
    await s.app.ctx.db.insert(connectSessions).values([
      { id: randomUUID(), machineId: a, userId: student.p.uid, openedAt: opened, closedAt: new Date(opened.getTime() + 45 * MIN) },
      { id: randomUUID(), machineId: b, userId: teacher.p.uid, openedAt: opened, closedAt: new Date(opened.getTime() + 5 * MIN) },
    ]);
    const res = await s.call('GET', `/v1/user/usage?packId=${course.courseId}`, { token: teacher.token });
    expect(res.status).toBe(200);
    expect(res.body.runs).toHaveLength(2);
    expect(res.body.totalHours).toBe(1.75);
    // The instructor's own session is not a student's.
    expect(res.body.students).toEqual([{ student: student.p.email, machineName: expect.any(String), start: '2026-03-02T09:05:00.000Z', end: '2026-03-02T09:50:00.000Z', hours: 0.75 }]);
    const csv = await fetch(`${s.base}/v1/user/usage.csv?packId=${course.courseId}&view=students`, { headers: { idtoken: teacher.token } });
    expect((await csv.text()).split('\r\n')[1]).toBe(`${student.p.email},${res.body.students[0].machineName},2026-03-02T09:05:00.000Z,2026-03-02T09:50:00.000Z,0.75`);
    // The student reads nothing of the course's history.
    expect((await s.call('GET', `/v1/user/usage?packId=${course.courseId}`, { token: student.token })).status).toBe(404);
  });

  it('answers 404 for another user’s machine or an unknown id, 400 without a packId', async () => {
    const owner = await user();
    const stranger = await user();
    const id = await seedMachine(s.app.ctx.db, owner.p.uid);
    expect((await s.call('GET', `/v1/user/usage?packId=${id}`, { token: stranger.token })).status).toBe(404);
    expect((await fetch(`${s.base}/v1/user/usage.csv?packId=${id}`, { headers: { idtoken: stranger.token } })).status).toBe(404);
    expect((await s.call('GET', `/v1/user/usage?packId=nope`, { token: owner.token })).status).toBe(404);
    expect((await s.call('GET', `/v1/user/usage`, { token: owner.token })).status).toBe(400);
    expect((await s.call('GET', `/v1/user/usage?packId=${id}`)).status).toBe(401);
  });
});

describe('receipts', () => {
  it("lists the caller's paid orders with the country's tax included, and serves each as a PDF", async () => {
    const buyer = await user({ name: 'Rita Receipt' });
    const de = await paidOrder(buyer.p.uid, { region: 'DE', amountMinor: 11900, currency: 'EUR' });
    const inOrder = await paidOrder(buyer.p.uid, { region: 'IN', amountMinor: 118000, currency: 'INR' });
    await paidOrder(buyer.p.uid, { region: 'UK', amountMinor: 5000, currency: 'GBP', status: 'pending' });
    const res = await s.call('GET', '/v1/user/receipts', { token: buyer.token });
    expect(res.status).toBe(200);
    expect(res.body.receipts).toHaveLength(2);
    const byId = new Map(res.body.receipts.map((r: { orderId: string }) => [r.orderId, r]));
    expect(byId.get(de)).toMatchObject({ number: `HD-${de.slice(0, 8).toUpperCase()}`, total: 119, currency: 'EUR', taxLabel: CONSUMER_TAX.DE.label, taxRate: 0.19, tax: 19, customer: { name: 'Rita Receipt', email: buyer.p.email } });
    expect(byId.get(inOrder)).toMatchObject({ total: 1180, currency: 'INR', taxLabel: 'GST', taxRate: 0.18, tax: 180 });

    const one = await s.call('GET', `/v1/user/receipt?orderId=${de}`, { token: buyer.token });
    expect(one.body).toEqual(byId.get(de));
    const pdf = await fetch(`${s.base}/v1/user/receipt.pdf?orderId=${de}`, { headers: { idtoken: buyer.token } });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const bytes = Buffer.from(await pdf.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(bytes.length).toBeGreaterThan(1000);
  });

  it("answers 404 for another user's order, an unpaid one or a bad id", async () => {
    const buyer = await user();
    const stranger = await user();
    const paid = await paidOrder(buyer.p.uid, { region: 'ES', amountMinor: 12100, currency: 'EUR' });
    const pending = await paidOrder(buyer.p.uid, { region: 'ES', amountMinor: 12100, currency: 'EUR', status: 'pending' });
    expect((await s.call('GET', `/v1/user/receipt?orderId=${paid}`, { token: stranger.token })).status).toBe(404);
    expect((await fetch(`${s.base}/v1/user/receipt.pdf?orderId=${paid}`, { headers: { idtoken: stranger.token } })).status).toBe(404);
    expect((await s.call('GET', `/v1/user/receipt?orderId=${pending}`, { token: buyer.token })).status).toBe(404);
    expect((await s.call('GET', '/v1/user/receipt?orderId=x', { token: buyer.token })).status).toBe(404);
    expect((await s.call('GET', '/v1/user/receipts', { token: stranger.token })).body).toEqual({ receipts: [] });
  });
});
