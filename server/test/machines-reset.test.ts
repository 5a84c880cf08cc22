import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { machines } from '../src/db/schema/index';
import { transaction } from '../src/db/after-commit';
import { RESET_RESTART, resetDone } from '../src/modules/machines/reconciler-steps';
import { fakeProvider, fakeRfbServer, machineRow, seedCourseMachines, seedMachine, seedUser, signFor } from './machines-fixtures';

const DAY = 86_400_000;

/** POST /v1/user/slot/reset over real HTTP; the reconciler (run pass by pass) carries it out on a recording provider. */
describe('Reset machine', () => {
  let s: TestServer;
  let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
  let provider: ReturnType<typeof fakeProvider>;
  const db = () => s.app.ctx.db;
  const pass = () => s.app.ctx.machines.reconciler.runOnce();
  const reset = (token: string, body: object) => s.call('POST', '/v1/user/slot/reset', { token, body });
  const resetsOf = (id: string) => provider.calls.filter((c) => c.op === 'reset' && c.id === id);

  beforeAll(async () => {
    rfb = await fakeRfbServer();
    provider = fakeProvider(rfb.port);
    s = await startTestServer({ overrides: { machineProvider: provider } });
  });
  afterAll(async () => {
    await s.close();
    await rfb.close();
  });

  async function customer(minutes = 600) {
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid);
    await s.app.ctx.ledger.credit(db(), { machineId: id, minutes, expiresAt: new Date(Date.now() + 30 * DAY), key: `t:${id}` });
    return { id, uid: u.uid, token: await signFor(s.app.ctx.tokens, u) };
  }

  it('needs a signed-in caller and answers 404 for unknown ids and for machines that are not the caller’s', async () => {
    const mine = await customer();
    const theirs = await customer();
    expect((await s.call('POST', '/v1/user/slot/reset', { body: { packId: mine.id } })).status).toBe(401);
    for (const packId of [theirs.id, 'nope', crypto.randomUUID()]) {
      const res = await reset(mine.token, { packId });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: 'Machine not found.' });
    }
    expect((await reset(mine.token, { packId: mine.id, eraseHome: 'yes' })).status).toBe(400);
    expect((await reset(mine.token, { packId: mine.id, extra: 1 })).status).toBe(400);
    expect((await machineRow(db(), theirs.id)).resetRequested).toBeNull();
    await pass();
    expect(resetsOf(theirs.id)).toEqual([]);
  });

  it('resets a stopped machine once, keeps the home, and says so on the dashboard', async () => {
    const c = await customer();
    const answers = await Promise.all([1, 2, 3].map(() => reset(c.token, { packId: c.id })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers[0]!.body).toEqual({ status: 'RESETTING' });
    await pass();
    await pass();
    // Passes the requests kick may run between them: each reset is of the desktop only, with the machine's own home.
    expect(resetsOf(c.id).length).toBeGreaterThanOrEqual(1);
    for (const r of resetsOf(c.id)) expect(r).toEqual({ op: 'reset', id: c.id, homeKey: c.id, eraseHome: false });
    expect(await machineRow(db(), c.id)).toMatchObject({ resetRequested: null, desired: 'stopped', observed: 'offline', stopReason: resetDone('desktop') });
  });

  it('restarts a running machine from a fresh desktop, charging what it used, and erases the home when asked', async () => {
    const c = await customer();
    expect((await s.call('POST', '/v1/user/slot', { token: c.token, body: { packId: c.id } })).status).toBe(200);
    for (let i = 0; i < 5 && (await machineRow(db(), c.id)).observed !== 'online'; i++) await pass();
    expect((await machineRow(db(), c.id)).observed).toBe('online');

    expect((await reset(c.token, { packId: c.id, eraseHome: true })).status).toBe(200);
    await pass(); // the desktop ends and is reset: the machine is starting again (or, after a kicked pass, online)
    expect(resetsOf(c.id)).toEqual([{ op: 'reset', id: c.id, homeKey: c.id, eraseHome: true }]);
    expect(await machineRow(db(), c.id)).toMatchObject({ resetRequested: null, desired: 'running' });
    for (let i = 0; i < 5 && (await machineRow(db(), c.id)).observed !== 'online'; i++) await pass();
    expect((await machineRow(db(), c.id)).observed).toBe('online');
    const ops = provider.calls.filter((x) => x.id === c.id).map((x) => x.op);
    expect(ops.slice(ops.indexOf('reset'))).toEqual(['reset', 'start']); // started again only after the reset
    expect(RESET_RESTART).toMatch(/reset/);
    await s.call('POST', '/v1/user/slot', { token: c.token, body: { packId: c.id, terminate: true } });
    await pass();
  });

  it('a home erase asked while a desktop reset waits is not lost, and never weakened by a later desktop reset', async () => {
    const c = await customer();
    // Both requests before any pass can see them (one transaction), in the order a user would make them.
    await transaction(db(), async (tx) => {
      await s.app.ctx.machines.requestReset(tx, c.id, 'home');
      await s.app.ctx.machines.requestReset(tx, c.id, 'desktop');
      expect((await machineRow(tx, c.id)).resetRequested).toBe('home');
    });
    await pass();
    await pass();
    expect(resetsOf(c.id).map((r) => r.eraseHome)).toEqual([true]);
  });

  it("lets a course's instructor reset a seat with the seated student's home; a student cannot", async () => {
    const inst = await seedUser(db(), { instructor: true });
    const student = await seedUser(db());
    const { ids } = await seedCourseMachines(db(), inst.uid, 2);
    await db().update(machines).set({ homeKey: `course-student-${student.uid}` }).where(sql`${machines.id} = ${ids[0]!}`);
    const studentToken = await signFor(s.app.ctx.tokens, student);
    expect((await reset(studentToken, { packId: ids[0] })).status).toBe(404);
    const res = await reset(await signFor(s.app.ctx.tokens, inst), { packId: ids[0] });
    expect(res.status).toBe(200);
    await pass();
    expect(resetsOf(ids[0]!)).toEqual([{ op: 'reset', id: ids[0], homeKey: `course-student-${student.uid}`, eraseHome: false }]);
    expect(resetsOf(ids[1]!)).toEqual([]);
  });
});
