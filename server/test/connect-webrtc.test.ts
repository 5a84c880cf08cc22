import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { GATEWAY_CLOSE } from '@hyperdesk/contract';
import { connectSessions, roster } from '../src/db/schema/index';
import type { Endpoint, MachineProvider } from '../src/modules/machines/providers/types';
import { startTestServer, type TestServer } from './harness';
import { openGateway, seedCourse, seedMachine, seedUser, ticketFor, until, type GatewayClient } from './connect-fixtures';
import { trustedUnixSocket } from './machines-desktops';
import { courseTicket } from './course-tickets';

/**
 * WebRTC mode of the gateway (issue 12): the same ticket rules as VNC, with the machine's streaming agent (here a
 * stand-in on a Unix socket) as the far end. A session that is refused never reaches the agent; a session that
 * loses access has its agent connection closed, which makes the real agent tear the stream down.
 */

/** A stand-in streaming agent: records each connection's lines, answers `start` with an offer. */
interface FakeAgent {
  address: Endpoint;
  connections: { lines: any[]; closed: boolean; sock: net.Socket }[];
  close(): Promise<void>;
}

async function fakeAgent(dir: string, name: string): Promise<FakeAgent> {
  const a: FakeAgent = { address: trustedUnixSocket(path.join(dir, `${name}.sock`)), connections: [], close: async () => {} };
  const sockets: net.Socket[] = [];
  const server = net.createServer((sock) => {
    const conn = { lines: [] as any[], closed: false, sock };
    a.connections.push(conn);
    sockets.push(sock);
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const msg = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        conn.lines.push(msg);
        if (msg.type === 'start') sock.write(`${JSON.stringify({ type: 'offer', sdp: `v=0\r\ns=${name}\r\n` })}\n`);
      }
    });
    sock.on('close', () => (conn.closed = true));
    sock.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(String(a.address.ref.path), r));
  a.close = () =>
    new Promise((r) => {
      sockets.forEach((x) => x.destroy());
      server.close(() => r());
    });
  return a;
}

const agents = new Map<string, Endpoint>();
const provider: MachineProvider = {
  kind: 'fake',
  start: async () => {},
  // VNC is not offered: a WebRTC session must never need it.
  describe: async (id) => (agents.has(id) ? { state: 'running', agent: agents.get(id) } : { state: 'stopped' }),
  stop: async () => {},
  reset: async () => {},
  destroy: async () => {},
  list: async () => [...agents.keys()],
};

let s: TestServer;
let dir: string;
let agent: FakeAgent;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'hd-rtc-'));
  s = await startTestServer({ overrides: { machineProvider: provider } });
  agent = await fakeAgent(dir, 'agent-A');
});
afterAll(async () => {
  await s?.close();
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
});

const rtcPath = (wsPath: string) => `${wsPath}&mode=webrtc`;

/** Opens a WebRTC session, starts the stream and waits for the agent's offer. */
async function streaming(wsPath: string): Promise<GatewayClient> {
  const c = await openGateway(s, rtcPath(wsPath));
  await c.text('hello');
  c.ws.send(JSON.stringify({ type: 'start', codecs: ['h264', 'vp8'], quality: 'auto' }));
  expect(await c.text('offer')).toEqual({ type: 'offer', sdp: 'v=0\r\ns=agent-A\r\n' });
  return c;
}

async function ownMachine() {
  const u = await seedUser(s);
  const id = await seedMachine(s, { ownerId: u.id });
  agents.set(id, agent.address);
  return { u, id };
}

describe('WebRTC sessions through the gateway', () => {
  it('relays signaling both ways: ICE servers then the tab start reach the agent, the offer reaches the tab', async () => {
    const { u, id } = await ownMachine();
    const before = agent.connections.length;
    const c = await streaming((await ticketFor(s, u.token, id)).wsPath);
    const conn = agent.connections[before]!;
    expect(conn.lines[0]).toMatchObject({ type: 'config', iceServers: expect.any(Array) });
    expect(conn.lines[1]).toEqual({ type: 'start', codecs: ['h264', 'vp8'], quality: 'auto' });
    // Anything that is not signaling stays at the gateway; binary frames end the session.
    c.ws.send(JSON.stringify({ type: 'ping', t: 1 }));
    await c.text('pong');
    expect(conn.lines.map((l) => l.type)).toEqual(['config', 'start']);
    c.ws.send(Buffer.from([5, 0, 0, 1, 0, 1]));
    expect((await c.closed).code).toBe(1003);
    await until(() => conn.closed, 'the agent connection to close');
  });

  it("keeps a start sent as the socket opens (before the gateway's hello) until the agent is reached", async () => {
    const { u, id } = await ownMachine();
    const before = agent.connections.length;
    const c = await openGateway(s, rtcPath((await ticketFor(s, u.token, id)).wsPath));
    c.ws.send(JSON.stringify({ type: 'start', codecs: ['h264'], quality: 'low' }));
    expect(await c.text('offer')).toEqual({ type: 'offer', sdp: 'v=0\r\ns=agent-A\r\n' });
    // The hello comes before the offer: the tab does not wait for it, and the agent hears config then start, once.
    expect(c.texts.map((t) => t.type).indexOf('hello')).toBeLessThan(c.texts.map((t) => t.type).indexOf('offer'));
    expect(agent.connections[before]!.lines).toEqual([expect.objectContaining({ type: 'config' }), { type: 'start', codecs: ['h264'], quality: 'low' }]);
    c.ws.close();
    await c.closed;
  });

  it("starts the stream from the socket's URL as the session opens (the tab sends nothing); a malformed start there is ignored", async () => {
    const { u, id } = await ownMachine();
    const before = agent.connections.length;
    const c = await openGateway(s, `${rtcPath((await ticketFor(s, u.token, id)).wsPath)}&codecs=h264,vp8&quality=medium`);
    expect(await c.text('offer')).toEqual({ type: 'offer', sdp: 'v=0\r\ns=agent-A\r\n' });
    expect(agent.connections[before]!.lines).toEqual([expect.objectContaining({ type: 'config' }), { type: 'start', codecs: ['h264', 'vp8'], quality: 'medium' }]);
    c.ws.close();
    await c.closed;
    for (const bad of ['&codecs=h265&quality=auto', '&codecs=h264,vp8,vp8', '&codecs=h264&quality=ultra']) {
      const at = agent.connections.length;
      const d = await openGateway(s, `${rtcPath((await ticketFor(s, u.token, id)).wsPath)}${bad}`);
      await d.text('hello');
      await until(() => agent.connections[at]?.lines.length, 'the agent connection');
      d.ws.send(JSON.stringify({ type: 'ping', t: 1 }));
      await d.text('pong');
      expect(agent.connections[at]!.lines.map((l) => l.type), bad).toEqual(['config']);
      d.ws.close();
      await d.closed;
    }
  });

  it('refuses a replayed ticket without reaching the agent', async () => {
    const { u, id } = await ownMachine();
    const { wsPath } = await ticketFor(s, u.token, id);
    const first = await streaming(wsPath);
    const before = agent.connections.length;
    const again = await openGateway(s, rtcPath(wsPath));
    expect((await again.closed).code).toBe(GATEWAY_CLOSE.ticketRefused);
    expect(again.texts).toEqual([]);
    expect(agent.connections.length).toBe(before);
    first.ws.close();
    await first.closed;
  });

  it("refuses another user: no ticket for someone else's machine, and a ticket reaches only its own machine", async () => {
    const { id } = await ownMachine();
    const other = await seedUser(s);
    const refused = await s.call('POST', '/v1/slot/connect/ticket', { token: other.token, body: { url: `/v1/slot/connect?packId=${id}` } });
    expect(refused.status).toBe(404);
    // The other user's own ticket, with the first user's machine in the url, opens only the other user's machine.
    const otherId = await seedMachine(s, { ownerId: other.id });
    const agentB = await fakeAgent(dir, 'agent-B');
    agents.set(otherId, agentB.address);
    const { wsPath } = await ticketFor(s, other.token, otherId);
    const before = agent.connections.length;
    const c = await openGateway(s, `${rtcPath(wsPath)}&packId=${id}&machineId=${id}`);
    await c.text('hello');
    c.ws.send(JSON.stringify({ type: 'start', codecs: ['vp8'] }));
    expect((await c.text('offer')).sdp).toContain('agent-B');
    expect(agent.connections.length).toBe(before);
    c.ws.close();
    await agentB.close();
  });

  it('cuts off a student removed from the roster: the tab is told, the agent connection closes', async () => {
    const instructor = await seedUser(s, { instructor: true });
    const student = await seedUser(s);
    const courseId = await seedCourse(s, instructor.id);
    const id = await seedMachine(s, { courseId });
    agents.set(id, agent.address);
    await s.app.ctx.db.insert(roster).values({ courseId, email: student.email });
    const res = await courseTicket(s, student.token, courseId);
    expect(res.status).toBe(200);
    const before = agent.connections.length;
    const c = await streaming(res.body.wsPath);
    const conn = agent.connections[before]!;
    await s.app.ctx.db.delete(roster).where(and(eq(roster.courseId, courseId), eq(roster.email, student.email)));
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.accessLost);
    expect(c.texts.find((t) => t.type === 'stopped')?.code).toBe('access-lost');
    await until(() => conn.closed, 'the agent connection to close');
  }, 20_000);

  it('closes the stream when the machine is stopped', async () => {
    const { u, id } = await ownMachine();
    const before = agent.connections.length;
    const c = await streaming((await ticketFor(s, u.token, id)).wsPath);
    await s.app.ctx.machines.requestStop(s.app.ctx.db, [id], 'Stopped from the dashboard.');
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.machineStopped);
    await until(() => agent.connections[before]!.closed, 'the agent connection to close');
  });

  it('a stream another tab took ends as opened elsewhere (the tab waits for the user); an agent that just went away is a hiccup', async () => {
    const { u, id } = await ownMachine();
    const before = agent.connections.length;
    const first = await streaming((await ticketFor(s, u.token, id)).wsPath);
    // What the real agent does when a second connection comes: it tells the first, then closes it.
    const taken = agent.connections[before]!.sock;
    taken.end(`${JSON.stringify({ type: 'replaced' })}\n`);
    expect((await first.closed).code).toBe(GATEWAY_CLOSE.openedElsewhere);
    const second = await streaming((await ticketFor(s, u.token, id)).wsPath);
    agent.connections[before + 1]!.sock.destroy();
    expect((await second.closed).code).toBe(GATEWAY_CLOSE.desktopUnreachable);
  });

  it('counts data channel input (the tab reports it as activity) for idle stop', async () => {
    const { u, id } = await ownMachine();
    const c = await streaming((await ticketFor(s, u.token, id)).wsPath);
    const session = async () => (await s.app.ctx.db.select().from(connectSessions).where(eq(connectSessions.machineId, id)))[0];
    expect((await session())?.lastInputAt ?? null).toBeNull();
    c.ws.send(JSON.stringify({ type: 'activity' }));
    // The first input of a session is written at once (later ones at most every 30 s, and by the idle job).
    const row = await until(async () => (await session())?.lastInputAt, 'the session input time');
    expect(row.getTime()).toBeGreaterThan(Date.now() - 60_000);
    c.ws.close();
  });
});
