import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../src/lib/clock';
import { verifyLedger } from '../src/modules/ledger/service';
import { startTestServer, type TestServer } from './harness';
import { makeUser, pathOf, rechargeBody, submitCard, type TestUser } from './commerce-fixtures';
import { runningCourse } from './course-fixtures';
import { createUser } from './identity-helpers';

/**
 * "x of y hours left" (issue 22): an operator's added hours and a top-up count in the total as well as in what is
 * left, so a balance entry never has more hours left than its total, for single machines and courses alike.
 */

const clock = manualClock(new Date());
let s: TestServer;
let operator: string;

beforeAll(async () => {
  s = await startTestServer({ clock });
  operator = (await createUser(s, { name: 'Olga Operator', admin: true })).token;
});
afterAll(async () => s.close());

const balance = async (token: string) => (await s.call('GET', '/v1/user/wallet/balance', { token })).body.balance as { timeLeft: number; totalHours: number; role: string }[];

async function adjustHours(machineId: string, minutes: number) {
  const res = await s.call('POST', '/v1/admin/adjustments', { token: operator, body: { machineId, minutes, reason: 'Outage on the course day' } });
  expect(res.status).toBe(200);
}

/** Buys a pack through the real flow (recharge → hosted page → card → order status) and answers the order id. */
async function buy(user: TestUser, packId: string) {
  const res = await s.call('POST', '/v1/user/wallet/recharge', { token: user.token, body: rechargeBody(s, packId) });
  expect(res.status).toBe(200);
  const paid = await submitCard(s.base, pathOf(res.body.url), { number: '4242424242424242' });
  const orderId = new URL(paid.location!).searchParams.get('orderId')!;
  expect((await s.call('POST', '/v1/user/order/status', { token: user.token, body: { orderId } })).body.status).toBe('paid');
}

describe('hours left never above the total', () => {
  it("a single machine: an operator's added hours and a top-up raise the total with what is left", async () => {
    const user = await makeUser(s);
    await buy(user, 'uk-unreal-10h');
    const [bought] = await balance(user.token);
    expect(bought).toMatchObject({ timeLeft: 10, totalHours: 10 });
    const machineId = (bought as unknown as { packId: string }).packId;

    await adjustHours(machineId, 84);
    expect((await balance(user.token))[0]).toMatchObject({ timeLeft: 11.4, totalHours: 11.4 });

    await buy(user, 'uk-unreal-10h');
    expect((await balance(user.token))[0]).toMatchObject({ timeLeft: 21.4, totalHours: 21.4 });

    // Taking hours away lowers what is left, not what was granted.
    await adjustHours(machineId, -120);
    expect((await balance(user.token))[0]).toMatchObject({ timeLeft: 19.4, totalHours: 21.4 });
    expect(await verifyLedger(s.database.db)).toEqual([]);
  });

  it('a course: the total follows the hours every machine was granted, never below what is left', async () => {
    const teacher = await createUser(s, { instructor: true });
    const owner = { uid: teacher.row.id, email: teacher.email, name: 'T', instructor: true, admin: false, emailVerified: true };
    const { ids } = await runningCourse(s, clock, owner, 2, 10);
    const entry = async () => (await balance(teacher.token)).find((e) => e.role === 'INSTRUCTOR')!;
    expect(await entry()).toMatchObject({ timeLeft: 10, totalHours: 10 });

    // One machine topped up by the operator: the course still has 10 h on every seat.
    await adjustHours(ids[0]!, 84);
    expect(await entry()).toMatchObject({ timeLeft: 10, totalHours: 10 });
    // Both: 11.4 of 11.4, not "11.4 of 10".
    await adjustHours(ids[1]!, 84);
    expect(await entry()).toMatchObject({ timeLeft: 11.4, totalHours: 11.4 });
    await adjustHours(ids[1]!, -60);
    expect(await entry()).toMatchObject({ timeLeft: 10.4, totalHours: 11.4 });
    for (const e of await balance(teacher.token)) expect(e.timeLeft).toBeLessThanOrEqual(e.totalHours);
  });
});
