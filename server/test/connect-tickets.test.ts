import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_CLOSE } from '@hyperdesk/contract';
import { connectTickets } from '../src/db/schema/index';
import { manualClock } from '../src/lib/clock';
import type { Endpoint } from '../src/modules/machines/providers/types';
import { startTestServer, type TestServer } from './harness';
import {
  fakeDesktop,
  fakeProvider,
  openGateway,
  seedCourse,
  seedMachine,
  seedUser,
  ticketFor,
  until,
  type FakeDesktop,
  type SeededUser,
} from './connect-fixtures';

const clock = manualClock(new Date('2030-03-01T10:00:00Z'));
const endpoints = new Map<string, Endpoint>();
let s: TestServer;
let alice: SeededUser;
let bob: SeededUser;
let teacher: SeededUser;
let machineA: string;
let machineB: string;
let courseMachine: string;
let deskA: FakeDesktop;
let deskB: FakeDesktop;

beforeAll(async () => {
  s = await startTestServer({ clock, overrides: { machineProvider: fakeProvider(endpoints) } });
  [alice, bob, teacher] = await Promise.all([seedUser(s), seedUser(s), seedUser(s, { instructor: true })]);
  machineA = await seedMachine(s, { ownerId: alice.id });
  machineB = await seedMachine(s, { ownerId: alice.id });
  courseMachine = await seedMachine(s, { courseId: await seedCourse(s, teacher.id) });
  [deskA, deskB] = await Promise.all([fakeDesktop('desktop-A'), fakeDesktop('desktop-B')]);
  endpoints.set(machineA, deskA.endpoint);
  endpoints.set(machineB, deskB.endpoint);
  endpoints.set(courseMachine, deskA.endpoint);
});
afterAll(async () => {
  await s?.close();
  await Promise.all([deskA?.close(), deskB?.close()]);
});

const entryUrl = (id: string) => `/v1/slot/connect?packId=${id}`;

describe('ticket issue', () => {
  it('needs a signed-in caller', async () => {
    const res = await s.call('POST', '/v1/slot/connect/ticket', { body: { url: entryUrl(machineA) } });
    expect(res.status).toBe(401);
  });

  it("gives the owner a short-lived ticket and stores only its hash", async () => {
    const res = await s.call('POST', '/v1/slot/connect/ticket', { token: alice.token, body: { url: entryUrl(machineA) } });
    expect(res.status).toBe(200);
    expect(res.body.ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.body.wsPath).toBe(`/v1/slot/connect/ws?ticket=${res.body.ticket}`);
    expect(res.body.expiresIn).toBeGreaterThan(0);
    expect(res.body.expiresIn).toBeLessThanOrEqual(60);
    const rows = await s.app.ctx.db.select().from(connectTickets);
    expect(rows.some((r) => r.ticketHash === res.body.ticket)).toBe(false);
    const mine = rows.find((r) => r.ticketHash === createHash('sha256').update(res.body.ticket).digest('hex'));
    expect(mine).toMatchObject({ userId: alice.id, machineId: machineA, usedAt: null });
    expect(mine!.expiresAt.getTime() - clock.now().getTime()).toBe(res.body.expiresIn * 1000);
  });

  it('answers the balance entry url itself with the same ticket JSON', async () => {
    const res = await s.call('GET', entryUrl(machineA), { token: alice.token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['expiresIn', 'ticket', 'wsPath']);
  });

  it("refuses everyone else with a 404 that tells nothing about the machine", async () => {
    const other = await s.call('POST', '/v1/slot/connect/ticket', { token: bob.token, body: { url: entryUrl(machineA) } });
    const missing = await s.call('POST', '/v1/slot/connect/ticket', { token: bob.token, body: { url: entryUrl('6a1f3c2e-0000-4000-8000-000000000000') } });
    const garbage = await s.call('GET', '/v1/slot/connect?packId=../../etc', { token: bob.token });
    for (const res of [other, missing, garbage]) {
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('Not found.');
      expect(JSON.stringify(res.body)).not.toContain(machineA);
    }
    // an offline machine of someone else looks exactly the same (no 409 that would reveal its state)
    const offline = await seedMachine(s, { ownerId: alice.id, observed: 'offline' });
    const res = await s.call('POST', '/v1/slot/connect/ticket', { token: bob.token, body: { url: entryUrl(offline) } });
    expect(res.status).toBe(404);
  });

  it('lets the instructor of a course connect to its machines, and nobody else', async () => {
    expect((await s.call('POST', '/v1/slot/connect/ticket', { token: teacher.token, body: { url: entryUrl(courseMachine) } })).status).toBe(200);
    expect((await s.call('POST', '/v1/slot/connect/ticket', { token: alice.token, body: { url: entryUrl(courseMachine) } })).status).toBe(404);
    expect((await s.call('POST', '/v1/slot/connect/ticket', { token: teacher.token, body: { url: entryUrl(machineA) } })).status).toBe(404);
  });

  it('refuses urls that are not connect links', async () => {
    for (const url of ['/v1/user/slot?packId=' + machineA, 'https://evil.example/v1/slot/connectx?packId=1', '/v1/slot/connect']) {
      const res = await s.call('POST', '/v1/slot/connect/ticket', { token: alice.token, body: { url } });
      expect(res.status).toBe(400);
    }
    expect((await s.call('POST', '/v1/slot/connect/ticket', { token: alice.token, body: {} })).status).toBe(400);
  });

  it('says why a machine cannot be reached: starting (with its start time), offline, out of hours', async () => {
    const starting = await seedMachine(s, { ownerId: alice.id, observed: 'processing' });
    let res = await s.call('POST', '/v1/slot/connect/ticket', { token: alice.token, body: { url: entryUrl(starting) } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'machine-starting', processingSince: clock.now().toISOString() });

    const offline = await seedMachine(s, { ownerId: alice.id, observed: 'offline', stopReason: 'Stopped after 20 minutes without use.' });
    res = await s.call('POST', '/v1/slot/connect/ticket', { token: alice.token, body: { url: entryUrl(offline) } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'machine-offline', stopReason: 'Stopped after 20 minutes without use.', processingSince: null });

    const empty = await seedMachine(s, { ownerId: alice.id, observed: 'offline', minutes: 0 });
    res = await s.call('POST', '/v1/slot/connect/ticket', { token: alice.token, body: { url: entryUrl(empty) } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('hours-exhausted');
  });
});

describe('ticket use at the gateway', () => {
  it('refuses a missing, malformed or tampered ticket', async () => {
    const { ticket } = await ticketFor(s, alice.token, machineA);
    const tampered = (ticket[0] === 'A' ? 'B' : 'A') + ticket.slice(1);
    for (const path of ['/v1/slot/connect/ws', '/v1/slot/connect/ws?ticket=', '/v1/slot/connect/ws?ticket=abc', `/v1/slot/connect/ws?ticket=${tampered}`]) {
      const c = await openGateway(s, path);
      expect((await c.closed).code).toBe(GATEWAY_CLOSE.ticketRefused);
      expect(c.bytes().length).toBe(0);
    }
    // the untampered ticket is still good
    const c = await openGateway(s, `/v1/slot/connect/ws?ticket=${ticket}`);
    await until(() => c.bytes().toString().includes('desktop-A'), 'the desktop greeting');
    c.ws.close();
  });

  it('accepts a ticket once', async () => {
    const { wsPath } = await ticketFor(s, alice.token, machineA);
    const first = await openGateway(s, wsPath);
    expect(await first.text('hello')).toMatchObject({ machineName: expect.stringContaining('Machine') });
    await until(() => first.bytes().toString().startsWith('RFB 003.008\ndesktop-A'), 'the desktop greeting');
    const again = await openGateway(s, wsPath);
    expect((await again.closed).code).toBe(GATEWAY_CLOSE.ticketRefused);
    first.ws.close();
    await first.closed;
  });

  it('refuses an expired ticket', async () => {
    const { wsPath, expiresIn } = await ticketFor(s, alice.token, machineA);
    clock.advance(expiresIn * 1000);
    const c = await openGateway(s, wsPath);
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.ticketRefused);
  });

  it("reaches only the ticket's machine, whatever else the url says", async () => {
    const before = deskB.connections;
    const { wsPath } = await ticketFor(s, alice.token, machineA);
    const evil = `${wsPath}&packId=${machineB}&machineId=${machineB}&host=127.0.0.1&port=${deskB.endpoint.ref.port}`;
    const c = await openGateway(s, evil);
    await until(() => c.bytes().toString().includes('desktop-A'), 'the desktop greeting of A');
    expect(c.bytes().toString()).not.toContain('desktop-B');
    expect(deskB.connections).toBe(before);
    c.ws.close();
  });

  it("refuses a ticket whose user lost access to the machine before using it", async () => {
    const lent = await seedMachine(s, { ownerId: bob.id });
    endpoints.set(lent, deskB.endpoint);
    const { wsPath } = await ticketFor(s, bob.token, lent);
    const { machines } = await import('../src/db/schema/index');
    const { eq } = await import('drizzle-orm');
    await s.app.ctx.db.update(machines).set({ ownerUserId: alice.id }).where(eq(machines.id, lent));
    const before = deskB.connections;
    const c = await openGateway(s, wsPath);
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.accessLost);
    expect(deskB.connections).toBe(before);
  });
});
