import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { GATEWAY_CLOSE } from '@hyperdesk/contract';
import { connectSessions, machines } from '../src/db/schema/index';
import { createSessionAccess, STOPPED_BY_INSTRUCTOR, STOPPED_FROM_DASHBOARD } from '../src/modules/connect/session-access';
import { MAX_MESSAGE_BYTES, MAX_SESSIONS_PER_USER } from '../src/modules/connect/gateway';
import type { Endpoint } from '../src/modules/machines/providers/types';
import { startTestServer, type TestServer } from './harness';
import { tcpEndpoint } from '../src/modules/machines/providers/endpoint';
import { fakeDesktop, fakeProvider, openGateway, seedCourse, seedMachine, seedUser, ticketFor, until, type FakeDesktop, type SeededUser } from './connect-fixtures';

const endpoints = new Map<string, Endpoint>();
let s: TestServer;
let user: SeededUser;
let desk: FakeDesktop;

beforeAll(async () => {
  s = await startTestServer({ overrides: { machineProvider: fakeProvider(endpoints) } });
  user = await seedUser(s);
  desk = await fakeDesktop('desk');
});
afterAll(async () => {
  await s?.close();
  await desk?.close();
});

async function connected(machineId: string, who = user) {
  const { wsPath } = await ticketFor(s, who.token, machineId);
  const c = await openGateway(s, wsPath);
  await c.text('hello');
  return c;
}

describe('relay', () => {
  it('relays both ways, answers pings, and records the session', async () => {
    const id = await seedMachine(s, { ownerId: user.id });
    endpoints.set(id, desk.endpoint);
    const c = await connected(id);
    await until(() => c.bytes().toString().includes('RFB 003.008'), 'the greeting');
    const start = desk.received.length;
    c.ws.send(Buffer.from('RFB 003.008\n'));
    await until(() => Buffer.concat(desk.received.slice(start)).toString() === 'RFB 003.008\n', 'the client bytes at the desktop');
    c.ws.send(JSON.stringify({ type: 'ping', t: 42.5 }));
    expect(await c.text('pong')).toEqual({ type: 'pong', t: 42.5 });
    // status messages never reach the desktop
    expect(Buffer.concat(desk.received.slice(start)).toString()).not.toContain('ping');
    c.ws.close();
    await c.closed;
    const row = await until(async () => {
      const [r] = await s.app.ctx.db.select().from(connectSessions).where(eq(connectSessions.machineId, id));
      return r?.closedAt ? r : null;
    }, 'the closed session row');
    expect(row).toMatchObject({ userId: user.id, closeReason: 'client-closed', bytesFromClient: 12 });
    expect(row.bytesToClient).toBeGreaterThanOrEqual(16);
  });

  it('exposes open sessions and relayed bytes as metrics', async () => {
    const id = await seedMachine(s, { ownerId: user.id });
    endpoints.set(id, desk.endpoint);
    const c = await connected(id);
    await until(() => c.bytes().length > 0, 'bytes');
    const res = await fetch(`${s.base}/metrics`);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toMatch(/hyperdesk_connect_sessions_open [1-9]/);
    expect(text).toMatch(/hyperdesk_connect_bytes_relayed_total\{direction="to_client"\} [1-9]/);
    // A request a proxy forwarded from outside is not a local scraper.
    expect((await fetch(`${s.base}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(404);
    c.ws.close();
  });

  it('closes a client that sends a message over the size limit', async () => {
    const id = await seedMachine(s, { ownerId: user.id });
    endpoints.set(id, desk.endpoint);
    const c = await connected(id);
    c.ws.send(Buffer.alloc(MAX_MESSAGE_BYTES + 1));
    expect((await c.closed).code).toBe(1009);
  });

  it(`allows ${MAX_SESSIONS_PER_USER} sessions per user at once`, async () => {
    const u = await seedUser(s);
    const id = await seedMachine(s, { ownerId: u.id });
    endpoints.set(id, desk.endpoint);
    const open = [];
    for (let i = 0; i < MAX_SESSIONS_PER_USER; i++) open.push(await connected(id, u));
    const { wsPath } = await ticketFor(s, u.token, id);
    const extra = await openGateway(s, wsPath);
    expect((await extra.closed).code).toBe(GATEWAY_CLOSE.tooManySessions);
    open[0]!.ws.close();
    await open[0]!.closed;
    await until(async () => {
      const { wsPath: again } = await ticketFor(s, u.token, id);
      const c = await openGateway(s, again);
      const ok = await Promise.race([c.text('hello').then(() => true), c.closed.then(() => false)]);
      if (ok) c.ws.close();
      return ok;
    }, 'a free session slot');
    open.forEach((c) => c.ws.close());
  });

  it('stops reading the desktop while the browser does not keep up, and loses nothing', async () => {
    const LIMIT = 40 * 1024 * 1024;
    let written = 0;
    let stalled = false;
    const firehose = net.createServer((sock) => {
      const chunk = Buffer.alloc(64 * 1024, 7);
      const pump = () => {
        while (written < LIMIT) {
          written += chunk.length;
          if (!sock.write(chunk)) {
            const t = setTimeout(() => (stalled = true), 1500);
            sock.once('drain', () => {
              clearTimeout(t);
              pump();
            });
            return;
          }
        }
        sock.end();
      };
      pump();
    });
    await new Promise<void>((r) => firehose.listen(0, '127.0.0.1', r));
    const id = await seedMachine(s, { ownerId: user.id });
    endpoints.set(id, tcpEndpoint('127.0.0.1', (firehose.address() as net.AddressInfo).port));
    const { wsPath } = await ticketFor(s, user.token, id);
    const c = await openGateway(s, wsPath);
    (c.ws as unknown as { _socket: net.Socket })._socket.pause(); // a browser that does not read
    await until(() => stalled || written >= LIMIT, 'the desktop to stall or finish', 30_000);
    expect(stalled).toBe(true);
    expect(written).toBeLessThan(LIMIT / 2);
    const stalledAt = written;
    expect(stalledAt).toBeLessThan(LIMIT);
    (c.ws as unknown as { _socket: net.Socket })._socket.resume();
    await until(() => c.received() >= LIMIT, 'every byte at the browser', 60_000);
    expect(c.received()).toBe(LIMIT);
    expect(c.bytes().every((b) => b === 7)).toBe(true);
    console.log(`backpressure: the desktop stalled after ${(stalledAt / 1048576).toFixed(1)} MiB`);
    c.ws.close();
    firehose.close();
  }, 90_000);
});

describe('end of a session', () => {
  it('tells the user and closes when the machine is stopped', async () => {
    const id = await seedMachine(s, { ownerId: user.id });
    endpoints.set(id, desk.endpoint);
    const c = await connected(id);
    await s.app.ctx.machines.requestStop(s.app.ctx.db, [id], 'Your hours ran out.');
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.machineStopped);
    expect(c.texts.find((t) => t.type === 'stopped')).toEqual({ type: 'stopped', code: 'machine-stopped', reason: 'Your hours ran out.' });
  });

  it("tells a course machine's instructor that it was stopped from the dashboard (a student hears that the instructor did)", async () => {
    const teacher = await seedUser(s, { instructor: true });
    const id = await seedMachine(s, { courseId: await seedCourse(s, teacher.id) });
    endpoints.set(id, desk.endpoint);
    const c = await connected(id, teacher);
    await s.app.ctx.machines.requestStop(s.app.ctx.db, [id]);
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.machineStopped);
    expect(c.texts.find((t) => t.type === 'stopped')).toEqual({ type: 'stopped', code: 'machine-stopped', reason: STOPPED_FROM_DASHBOARD });
    const access = createSessionAccess(s.app.ctx.connect.deps);
    const [row] = await s.app.ctx.db.select().from(machines).where(eq(machines.id, id));
    expect(row!.stoppedBy).toBe('instructor');
    expect((await access.stoppedMessage(row!, teacher.id)).reason).toBe(STOPPED_FROM_DASHBOARD);
    expect((await access.stoppedMessage(row!, user.id)).reason).toBe(STOPPED_BY_INSTRUCTOR);
  });

  it('closes when the user loses access to the machine', async () => {
    const other = await seedUser(s);
    const id = await seedMachine(s, { ownerId: user.id });
    endpoints.set(id, desk.endpoint);
    const c = await connected(id);
    await s.app.ctx.db.update(machines).set({ ownerUserId: other.id }).where(eq(machines.id, id));
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.accessLost);
    expect(c.texts.find((t) => t.type === 'stopped')?.code).toBe('access-lost');
  });

  it('lets the browser reconnect when the desktop connection drops while the machine runs', async () => {
    const id = await seedMachine(s, { ownerId: user.id });
    const flaky = await fakeDesktop('flaky');
    endpoints.set(id, flaky.endpoint);
    const c = await connected(id);
    await until(() => flaky.sockets.length > 0, 'the desktop connection');
    flaky.sockets[0]!.destroy();
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.desktopUnreachable);
    expect(c.texts.find((t) => t.type === 'stopped')).toBeUndefined();
    const again = await connected(id);
    await until(() => again.bytes().toString().includes('flaky'), 'the desktop again');
    again.ws.close();
    await flaky.close();
  });
});
