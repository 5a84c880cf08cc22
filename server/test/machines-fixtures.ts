import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { sql } from 'drizzle-orm';
import type { Db } from '../src/db/client';
import { machines, users } from '../src/db/schema/index';
import type { Tokens } from '../src/modules/identity/tokens';
import { tcpEndpoint } from '../src/modules/machines/providers/endpoint';
import type { MachineProvider, ObservedDesktop } from '../src/modules/machines/providers/types';

export async function seedUser(db: Db, opts: { instructor?: boolean } = {}): Promise<{ uid: string; email: string }> {
  const uid = randomUUID();
  const email = `u-${uid.slice(0, 8)}@example.com`;
  await db.insert(users).values({ id: uid, email, displayName: 'Test User', passwordHash: 'x', instructor: opts.instructor ?? false });
  return { uid, email };
}

/** A single user's machine (one per user in these tests: owner+region+platform is unique). */
export async function seedMachine(db: Db, ownerUserId: string, name = 'Unreal Engine · Germany'): Promise<string> {
  const id = randomUUID();
  await db.insert(machines).values({ id, ownerUserId, name, region: 'DE', platform: 'Unreal Engine' });
  return id;
}

export async function seedCourseMachines(db: Db, ownerUserId: string, n: number): Promise<{ courseId: string; ids: string[] }> {
  const courseId = randomUUID();
  await db.execute(sql`insert into courses (id, owner_user_id, name, region, platform, vms, hours_per_machine, start_at, end_at)
    values (${courseId}, ${ownerUserId}, 'Course', 'DE', 'Unreal Engine', ${n}, 10, now(), now() + interval '30 days')`);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = randomUUID();
    await db.insert(machines).values({ id, courseId, seq: i, name: `Seat ${i + 1}`, region: 'DE', platform: 'Unreal Engine' });
    ids.push(id);
  }
  return { courseId, ids };
}

export const signFor = (tokens: Tokens, u: { uid: string; email: string }) =>
  tokens.sign({ uid: u.uid, email: u.email, name: 'Test User', instructor: false, admin: false, emailVerified: false });

export async function machineRow(db: Db, id: string) {
  const [row] = await db.select().from(machines).where(sql`${machines.id} = ${id}`);
  return row!;
}

/** Reads a text/event-stream and collects its events until closed. */
export async function openEvents(base: string, token: string) {
  const abort = new AbortController();
  const res = await fetch(`${base}/v1/user/events`, { headers: { idtoken: token }, signal: abort.signal });
  const events: string[] = [];
  let raw = '';
  const done = (async () => {
    if (!res.body) return;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) return;
        raw += value;
        for (const m of value.matchAll(/^event: (\w+)$/gm)) events.push(m[1]!);
      }
    } catch {
      /* aborted */
    }
  })();
  return { res, events, raw: () => raw, close: async () => (abort.abort(), await done) };
}

/** A VNC server stand-in that only greets (enough for the reconciler's readiness probe). */
export async function fakeRfbServer(): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((s) => {
    s.on('error', () => {});
    s.end('RFB 003.008\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, close: () => new Promise((r) => server.close(() => r())) };
}

/**
 * An in-memory provider for reconciler and metering tests: machines come up after `upAfterMs` (never when
 * null), start may throw, and it records calls and the largest number of starts in flight.
 */
export function fakeProvider(rfbPort: number) {
  const desktops = new Map<string, { since: number; name: string }>();
  const calls: { op: 'start' | 'stop' | 'reset'; id: string; homeKey?: string; timeZone?: string; eraseHome?: boolean }[] = [];
  let inFlight = 0;
  const p = {
    upAfterMs: 0 as number | null,
    rfbPort,
    startDelayMs: 0,
    startError: null as string | null,
    maxInFlight: 0,
    calls,
    desktops,
    kind: 'fake',
    async start(m: { machineId: string; name: string; homeKey?: string; timeZone?: string }) {
      calls.push({ op: 'start', id: m.machineId, homeKey: m.homeKey, timeZone: m.timeZone });
      inFlight++;
      p.maxInFlight = Math.max(p.maxInFlight, inFlight);
      try {
        if (p.startDelayMs) await new Promise((r) => setTimeout(r, p.startDelayMs));
        if (p.startError) throw new Error(p.startError);
        if (!desktops.has(m.machineId)) desktops.set(m.machineId, { since: Date.now(), name: m.name });
      } finally {
        inFlight--;
      }
    },
    async describe(id: string): Promise<ObservedDesktop> {
      const d = desktops.get(id);
      if (!d) return { state: 'stopped' };
      const up = p.upAfterMs !== null && Date.now() - d.since >= p.upAfterMs;
      return up ? { state: 'running', endpoint: tcpEndpoint('127.0.0.1', p.rfbPort) } : { state: 'starting' };
    },
    async stop(id: string) {
      calls.push({ op: 'stop', id });
      desktops.delete(id);
    },
    async reset(id: string, o: { homeKey: string; eraseHome: boolean }) {
      calls.push({ op: 'reset', id, homeKey: o.homeKey, eraseHome: o.eraseHome });
      desktops.delete(id);
    },
    async destroy(id: string) {
      desktops.delete(id);
    },
    async list() {
      return [...desktops.keys()];
    },
  };
  return p satisfies MachineProvider & Record<string, unknown>;
}
