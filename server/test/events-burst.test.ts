import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness';
import { openEvents } from './machines-fixtures';
import { until } from './machines-desktops';
import { seedUser } from '../src/modules/courses/fixtures/seed';

/**
 * GET /v1/user/events folds a burst of changes into at most two pushes (each makes the dashboard re-fetch its
 * balance): a class's 40 machines coming online are announced to each of its 40 students.
 */
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s.close());

it('a burst of 40 changes reaches an open dashboard as one push at once and one after it', async () => {
  const student = await seedUser(s.app.ctx.db);
  const stream = await openEvents(s.base, await s.app.ctx.tokens.sign(student));
  await until('the stream to open', async () => stream.raw().includes(': connected'), 10_000, 20);
  for (let i = 0; i < 40; i++) s.app.ctx.events.publish([student.uid], { type: 'balance' });
  await until('the second push', async () => stream.events.length >= 2, 10_000, 20);
  expect(stream.events).toEqual(['balance', 'balance']);
  // A later change is still told.
  s.app.ctx.events.publish([student.uid], { type: 'balance' });
  await until('the third push', async () => stream.events.length >= 3, 10_000, 20);
  await stream.close();
});
