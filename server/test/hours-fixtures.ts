import { afterAll, beforeAll } from 'vitest';
import { startTestServer, type TestServer } from './harness';
import { manualClock } from '../src/lib/clock';
import { createHourAlerts } from '../src/modules/alerts/service';

export const T0 = new Date('2030-05-01T09:00:00Z');
export const MIN = 60_000;
export const DAY = 24 * 60 * MIN;

/**
 * A test server on a manual clock that starts at T0, for the hour alerts and notices: `h.s` once the file's tests
 * run, `h.db()`, `h.alerts()`, a fresh alerts instance, and `h.pass()`, one run of it (what a restarted, or another, server runs).
 */
export function useHoursServer() {
  const clock = manualClock(T0);
  const h = {
    clock,
    s: undefined as unknown as TestServer,
    db: () => h.s.app.ctx.db,
    alerts: () => createHourAlerts({ db: h.db(), mailer: h.s.app.ctx.mailer, clock, publicUrl: 'https://hd.example' }),
    pass: () => h.alerts().runOnce(),
  };
  beforeAll(async () => {
    h.s = await startTestServer({ clock });
  });
  afterAll(async () => {
    await h.s?.close();
  });
  return h;
}
