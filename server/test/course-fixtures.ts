import { sql } from 'drizzle-orm';
import type { TestServer } from './harness';
import type { Clock } from '../src/lib/clock';
import { seedCourseOrder } from '../src/modules/courses/fixtures/seed';
import type { Principal } from '../src/modules/identity/tokens';

const DAY = 86_400_000;

/** A paid course of `owner` that started a day before `clock`'s now (30 days of hours), and its machine ids by seat. */
export async function runningCourse(s: TestServer, clock: Clock, owner: Principal, vms: number, hours: number) {
  const startAt = new Date(clock.now().getTime() - DAY);
  const orderId = await seedCourseOrder(s.app.ctx.db, { userId: owner.uid, vms, hours, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY) });
  const courseId = await s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
  const ids = (await s.app.ctx.db.execute(sql`select id from machines where course_id = ${courseId} order by seq`)).rows.map((r) => String(r.id));
  return { courseId, ids };
}
