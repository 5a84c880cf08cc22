import type { TestServer } from './harness';

/**
 * A connect ticket for a course seat. A seat taken on a running machine first restarts it with the student's home
 * (issue 11.4): while the answer is 'machine-starting', run reconciler passes and ask again.
 */
export async function courseTicket(s: TestServer, token: string, courseId: string) {
  const ask = () => s.call('POST', '/v1/slot/connect/ticket', { token, body: { url: `/v1/slot/connect?packId=${courseId}` } });
  let res = await ask();
  for (let i = 0; i < 5 && res.status === 409 && res.body.code === 'machine-starting'; i++) {
    await s.app.ctx.machines.reconciler.runOnce();
    res = await ask();
  }
  return res;
}
