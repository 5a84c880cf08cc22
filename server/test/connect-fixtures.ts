import { randomUUID } from 'node:crypto';
import net from 'node:net';
import WebSocket from 'ws';
import { eq } from 'drizzle-orm';
import { courses, machines, users } from '../src/db/schema/index';
import type { Endpoint, MachineProvider } from '../src/modules/machines/providers/types';
import { tcpEndpoint } from '../src/modules/machines/providers/endpoint';
import type { TestServer } from './harness';

/** Waits for a condition (polling), failing with `what` after `ms`. */
export async function until<T>(fn: () => T | Promise<T>, what: string, ms = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface SeededUser {
  id: string;
  email: string;
  token: string;
}

export async function seedUser(s: TestServer, opts: { instructor?: boolean } = {}): Promise<SeededUser> {
  const id = randomUUID();
  const email = `u-${id.slice(0, 8)}@example.com`;
  // Seeded users have a verified address (roster access needs one; identity tests cover how it gets verified).
  await s.app.ctx.db.insert(users).values({ id, email, displayName: 'Test User', passwordHash: 'not-a-hash', instructor: !!opts.instructor, emailVerifiedAt: new Date() });
  const token = await s.app.ctx.tokens.sign({ uid: id, email, name: 'Test User', instructor: !!opts.instructor, admin: false, emailVerified: true });
  return { id, email, token };
}

export async function seedCourse(s: TestServer, ownerId: string): Promise<string> {
  const id = randomUUID();
  const now = Date.now();
  await s.app.ctx.db.insert(courses).values({
    id,
    ownerUserId: ownerId,
    name: 'Course',
    region: 'UK',
    platform: 'Unreal Engine',
    vms: 2,
    hoursPerMachine: 10,
    startAt: new Date(now - 86_400_000),
    endAt: new Date(now + 30 * 86_400_000),
  } as typeof courses.$inferInsert);
  return id;
}

let regionSeq = 0;

/** A machine row in the given state, with hours on it unless minutes is 0. */
export async function seedMachine(
  s: TestServer,
  o: { ownerId?: string; courseId?: string; observed?: 'online' | 'offline' | 'processing'; desired?: 'running' | 'stopped'; minutes?: number; stopReason?: string },
): Promise<string> {
  const id = randomUUID();
  const now = s.app.ctx.clock.now();
  const observed = o.observed ?? 'online';
  await s.app.ctx.db.insert(machines).values({
    id,
    ownerUserId: o.courseId ? null : (o.ownerId ?? null),
    courseId: o.courseId ?? null,
    seq: o.courseId ? ++regionSeq : 0,
    name: `Machine ${id.slice(0, 4)}`,
    region: o.courseId ? 'UK' : `R${++regionSeq}`,
    platform: 'Unreal Engine',
    desired: o.desired ?? (observed === 'offline' ? 'stopped' : 'running'),
    observed,
    onlineSince: observed === 'online' ? now : null,
    processingSince: observed === 'processing' ? now : null,
    stopReason: o.stopReason ?? null,
  });
  if ((o.minutes ?? 600) > 0) {
    await s.app.ctx.ledger.credit(s.app.ctx.db, {
      machineId: id,
      minutes: o.minutes ?? 600,
      expiresAt: new Date(now.getTime() + 30 * 86_400_000),
      key: `test-credit-${id}`,
    });
  }
  return id;
}

export async function machineRow(s: TestServer, id: string) {
  const [row] = await s.app.ctx.db.select().from(machines).where(eq(machines.id, id));
  return row!;
}

/** A stand-in VNC server: greets like RFB, then names itself, and records what it receives. */
export interface FakeDesktop {
  endpoint: Endpoint;
  received: Buffer[];
  connections: number;
  sockets: net.Socket[];
  close(): Promise<void>;
}

export async function fakeDesktop(name: string): Promise<FakeDesktop> {
  const d: FakeDesktop = { endpoint: tcpEndpoint('127.0.0.1', 0), received: [], connections: 0, sockets: [], close: async () => {} };
  const server = net.createServer((sock) => {
    d.connections++;
    d.sockets.push(sock);
    sock.on('data', (b) => d.received.push(Buffer.from(b)));
    sock.on('error', () => {});
    sock.write(`RFB 003.008\n${name}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  d.endpoint = tcpEndpoint('127.0.0.1', (server.address() as net.AddressInfo).port);
  d.close = () =>
    new Promise((r) => {
      d.sockets.forEach((x) => x.destroy());
      server.close(() => r());
    });
  return d;
}

/** A provider whose desktops are the given endpoints (the machines' real provider is an outside service here). */
export function fakeProvider(endpoints: Map<string, Endpoint>): MachineProvider {
  return {
    kind: 'fake',
    start: async () => {},
    describe: async (id) => (endpoints.has(id) ? { state: 'running', endpoint: endpoints.get(id) } : { state: 'stopped' }),
    stop: async () => {},
    reset: async () => {},
    destroy: async () => {},
    list: async () => [...endpoints.keys()],
  };
}

/** A gateway client that records everything it receives. */
export interface GatewayClient {
  ws: WebSocket;
  texts: any[];
  bytes(): Buffer;
  /** Binary bytes received so far (cheap to poll). */
  received(): number;
  closed: Promise<{ code: number; reason: string }>;
  text(type: string): Promise<any>;
}

export function openGateway(s: TestServer, wsPath: string): Promise<GatewayClient> {
  const ws = new WebSocket(s.base.replace(/^http/, 'ws') + wsPath);
  const chunks: Buffer[] = [];
  const texts: any[] = [];
  let count = 0;
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on('message', (data, isBinary) => {
    const b = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
    if (isBinary) {
      chunks.push(b);
      count += b.length;
    }
    else texts.push(JSON.parse(b.toString()));
  });
  const client: GatewayClient = {
    ws,
    texts,
    bytes: () => Buffer.concat(chunks),
    received: () => count,
    closed,
    text: (type) => until(() => texts.find((t) => t.type === type), `a ${type} message`),
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('error', reject);
  });
}

/** An id token signed at the server's current (possibly manual) time. */
export function freshToken(s: TestServer, u: SeededUser): Promise<string> {
  return s.app.ctx.tokens.sign({ uid: u.id, email: u.email, name: 'Test User', instructor: false, admin: false, emailVerified: true });
}

export async function ticketFor(s: TestServer, token: string, machineId: string): Promise<{ ticket: string; wsPath: string; expiresIn: number }> {
  const res = await s.call('POST', '/v1/slot/connect/ticket', { token, body: { url: `/v1/slot/connect?packId=${machineId}` } });
  if (res.status !== 200) throw new Error(`ticket: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
