import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { runningCourse } from './course-fixtures';
import { manualClock } from '../src/lib/clock';
import { roster, seats } from '../src/db/schema/index';
import { seedUser } from '../src/modules/courses/fixtures/seed';
import { courseBalance } from '../src/modules/courses/entries';
import { createMachinesParts, type MachinesPart } from '../src/modules/courses/machines-part';
import { SEAT_STALE_MS } from '../src/modules/courses/seats';
import type { Principal } from '../src/modules/identity/tokens';

/**
 * The course entries keep each course's machines part between reads (issue 14) and build it again only when the
 * course's machine version moved (migration 0740). Every change that shows in an entry must show in the very next
 * read — from this reader or another one (a second replica) — and a read that reuses the part must say so.
 */
const clock = manualClock(new Date('2031-02-03T10:00:00Z'));
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => s.close());

const course = (owner: Principal, vms: number, hours: number) => runningCourse(s, clock, owner, vms, hours);

/** One read through a reader (its own kept parts, like one replica): the entries and whether the part was rebuilt. */
function reader() {
  const builder = courseBalance(createMachinesParts());
  return async (p: Principal) => {
    const read = builder.read(p, clock.now());
    const [row] = (await s.app.ctx.db.execute(sql`select (${read.select}) as j`)).rows;
    const json = typeof row!.j === 'string' ? JSON.parse(row!.j) : row!.j;
    return { entries: read.entries(json) as Record<string, any>[], rebuilt: (json as unknown[][]).map((c) => c[12] !== null) };
  };
}

describe('course entries kept between reads', () => {
  it('reuse the machines part until a change shows, and show every change in the next read', async () => {
    const t = await seedUser(s.app.ctx.db, { instructor: true });
    const student = await seedUser(s.app.ctx.db);
    const c = await course(t, 3, 10);
    const read = reader();

    const first = await read(t);
    expect(first.rebuilt).toEqual([true]);
    expect(first.entries[0]).toMatchObject({ role: 'INSTRUCTOR', instanceStatus: 'offline', timeLeft: 10 });
    const again = await read(t);
    expect(again.rebuilt).toEqual([false]);
    expect(again.entries).toEqual(first.entries);

    await s.app.ctx.db.execute(sql`update machines set observed = 'online' where id = ${c.ids[1]!}`);
    const online = await read(t);
    expect(online.rebuilt).toEqual([true]);
    expect(online.entries[0]).toMatchObject({ instanceStatus: 'online' });
    expect(online.entries[0]!.seats.map((x: any) => x.instanceStatus)).toEqual(['offline', 'online', 'offline']);

    await s.app.ctx.ledger.debitMinute(s.app.ctx.db, { machineId: c.ids[0]!, key: `meter:${c.ids[0]}:1`, at: clock.now() });
    const debited = await read(t);
    expect(debited.rebuilt).toEqual([true]);
    expect(debited.entries[0]).toMatchObject({ timeLeft: 9.98 });

    // Who sits where is read fresh every time, without rebuilding the part.
    await s.app.ctx.db.insert(seats).values({ machineId: c.ids[2]!, courseId: c.courseId, userId: student.uid, lastSeenAt: clock.now() });
    const seated = await read(t);
    expect(seated.rebuilt).toEqual([false]);
    expect(seated.entries[0]!.seats[2]).toMatchObject({ student: student.email });
    clock.advance(SEAT_STALE_MS + 1000);
    const stale = await read(t);
    expect(stale.entries[0]!.seats[2]).toMatchObject({ student: null });

    await s.app.ctx.db.execute(sql`update machines set observed = 'offline', stop_reason = 'Memory limit reached' where id = ${c.ids[1]!}`);
    await s.app.ctx.db.execute(sql`update machines set name = 'Renamed seat' where id = ${c.ids[0]!}`);
    const stopped = await read(t);
    expect(stopped.rebuilt).toEqual([true]);
    expect(stopped.entries[0]).toMatchObject({ instanceStatus: 'offline', stopReason: 'Memory limit reached' });
    expect(stopped.entries[0]!.seats[0]).toMatchObject({ machineName: 'Renamed seat' });
  });

  it('a second reader (another replica) and the HTTP answer see a change the first reader did not make', async () => {
    const t = await seedUser(s.app.ctx.db, { instructor: true });
    const st = await seedUser(s.app.ctx.db);
    const c = await course(t, 2, 5);
    await s.app.ctx.db.insert(roster).values({ courseId: c.courseId, email: st.email });
    const a = reader();
    const b = reader();
    expect((await a(t)).entries[0]).toMatchObject({ instanceStatus: 'offline' });
    expect((await a(st)).entries[0]).toMatchObject({ role: 'STUDENT', instanceStatus: 'offline' });
    expect((await b(t)).rebuilt).toEqual([true]);

    await s.app.ctx.db.execute(sql`update machines set observed = 'processing', processing_since = ${clock.now().toISOString()}::timestamptz where id = ${c.ids[0]!}`);
    for (const r of [a, b]) {
      const { entries, rebuilt } = await r(t);
      expect(rebuilt).toEqual([true]);
      expect(entries[0]).toMatchObject({ instanceStatus: 'processing', processingSince: clock.now().toISOString() });
    }
    expect((await a(st)).entries[0]).toMatchObject({ role: 'STUDENT', instanceStatus: 'processing' });
    expect((await a(st)).entries[0]!.seats).toBeUndefined();
    const http = await s.call('GET', '/v1/user/wallet/balance', { token: await s.app.ctx.tokens.sign(t) });
    expect(http.body.balance[0]).toMatchObject({ instanceStatus: 'processing' });
  });
});

describe('kept machines parts', () => {
  const part = (nextExpiry: Date | null): MachinesPart => ({ leftMinutes: 1, grantedMinutes: 1, status: 'offline', processingSince: null, stopReason: null, nextExpiry, machines: [] });

  it('offer a part only to a user whose last read had that course, and only until its first lot expires', () => {
    const parts = createMachinesParts();
    const at = new Date('2031-01-01T00:00:00Z');
    parts.keep('c1', '7', part(new Date(at.getTime() + 60_000)));
    expect(parts.heldFor('u1', at).size).toBe(0);
    parts.read('u1', ['c1']);
    expect(parts.heldFor('u1', at).get('c1')?.version).toBe('7');
    expect(parts.heldFor('u2', at).size).toBe(0);
    expect(parts.heldFor('u1', new Date(at.getTime() + 60_000)).size).toBe(0);
  });

  it('keep at most `limit` courses and users, the least recently used go first', () => {
    const parts = createMachinesParts(2);
    const at = new Date();
    parts.read('u', ['c1', 'c2', 'c3']);
    parts.keep('c1', '1', part(null));
    parts.keep('c2', '1', part(null));
    parts.keep('c1', '2', part(null));
    parts.keep('c3', '1', part(null));
    expect([...parts.heldFor('u', at).keys()].sort()).toEqual(['c1', 'c3']);
    parts.read('v', []);
    parts.read('w', []);
    expect(parts.heldFor('u', at).size).toBe(0);
  });
});
