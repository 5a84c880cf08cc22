/**
 * Classrooms (issue 7): pricing and checkout of course packs, Start All / Stop All, the student roster, seats,
 * and the job that ends courses. Factory receiving only the services it uses (house rule 1).
 */
import { and, asc, eq, inArray, lte } from 'drizzle-orm';
import { countryById, formatCourseDates, MAX_STUDENTS, MIN_STUDENTS, type RosterSummary } from '@hyperdesk/contract';
import type { Db, Queryable } from '../../db/client';
import { transaction } from '../../db/after-commit';
import { courseHomes, courses, machines, packs, roster, seats, users } from '../../db/schema/index';
import { BadRequest, Conflict, NotFound } from '../../errors';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../lib/jobs';
import type { Principal } from '../identity/tokens';
import { accountActive } from '../identity/users';
import type { Mailer } from '../mail/service';
import type { Ledger } from '../ledger/service';
import type { Machines } from '../machines/service';
import type { Events } from '../machines/events';
import type { Billing } from '../billing/service';
import { courseDatesProblem, priceCourse, type CoursePrice } from './pricing';
import { fulfilCourseOrder, type OrderRow } from './fulfil';
import type { ParsedRoster } from './roster';
import { createRosterMembers } from './roster-members';
import { createSeatSessions } from './seat-sessions';
import { assignHomes, releaseCourseSeats, releaseSeatsOf, rosterUserIds } from './seats';
import { invitationNotices, MAX_ROSTER, maxRoster, planInvitations, sendInvitations } from './invitations';

export { MAX_ROSTER };

export const COURSE_ENDED = 'The course has ended.';
export const COURSE_NOT_STARTED = 'The course has not started yet.';
export const NO_HOURS_LEFT = "This course's machines have no hours left.";
export const VMS_MESSAGE = 'This field can have values between 1 and 40.';
export const PRICE_CHANGED = 'The price has changed. Please review your order.';
export const HOURS_UNAVAILABLE = 'The selected runtime is not available. Please review your order.';
/** Days after a course's end until its students' home folders are deleted. */
export const COURSE_HOME_RETENTION_DAYS = 30;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type CourseRow = typeof courses.$inferSelect;

export interface CoursesDeps {
  db: Db;
  clock: Clock;
  publicUrl: string;
  /** Invitation e-mails one instructor may send per day (INVITE_DAILY_LIMIT). */
  inviteDailyLimit: number;
  ledger: Pick<Ledger, 'credit' | 'remainingMinutes'>;
  machines: Pick<Machines, 'requestStart' | 'requestStop' | 'provider'>;
  events: Pick<Events, 'publish'>;
  mailer: Pick<Mailer, 'enqueue'>;
  billing: Pick<Billing, 'startCheckout' | 'assertReturnUrls' | 'fulfilment'>;
}

export interface CourseOrderBody {
  Platform: string;
  VMs: number;
  StartAt: number;
  ExpiresAt: number;
  Region: string;
  TotalHours: number;
  Price: number;
  success_url: string;
  cancel_url: string;
}

export interface CourseQuote {
  region: string;
  platform: string;
  vms: number;
  startAt: Date;
  expiresAt: Date;
  prices: CoursePrice[];
}

export type CoursesService = ReturnType<typeof createCoursesService>;

export function createCoursesService(deps: CoursesDeps) {
  const { db, clock } = deps;
  deps.billing.fulfilment.addFulfiller('course', async (tx, order) => {
    await fulfilCourseOrder(tx, deps.ledger, order);
    return {};
  });

  /** The caller's course, or 404 (another user's course and a malformed id look the same). */
  async function ownCourse(q: Queryable, principal: Principal, courseId: string, lock = false): Promise<CourseRow> {
    if (!UUID.test(courseId)) throw new NotFound('Course not found.');
    const base = q.select().from(courses).where(and(eq(courses.id, courseId), eq(courses.ownerUserId, principal.uid)));
    const [row] = lock ? await base.for('update') : await base;
    if (!row) throw new NotFound('Course not found.');
    return row;
  }

  async function machineIdsOf(q: Queryable, courseId: string): Promise<string[]> {
    const rows = await q.select({ id: machines.id }).from(machines).where(eq(machines.courseId, courseId)).orderBy(asc(machines.seq));
    return rows.map((r) => r.id);
  }

  async function notify(courseId: string, ownerId: string, extra: string[] = []): Promise<void> {
    const ids = new Set([ownerId, ...extra, ...(await rosterUserIds(db, courseId))]);
    deps.events.publish([...ids], { type: 'balance' });
  }

  /**
   * Prices a course from the catalog of its country and platform. A platform without its own packs (Unity is
   * sold to business users only, on the same machine) is priced from the Unreal Engine packs of the country.
   */
  async function quote(body: { Platform: string; VMs: number; StartAt: number; ExpiresAt: number; Region: string }): Promise<CourseQuote> {
    if (!Number.isInteger(body.VMs) || body.VMs < MIN_STUDENTS || body.VMs > MAX_STUDENTS) throw new BadRequest(VMS_MESSAGE, 'course-vms');
    const problem = courseDatesProblem(body.StartAt, body.ExpiresAt, clock.now());
    if (problem) throw new BadRequest(problem, 'course-dates');
    const catalog = async (platform: string) =>
      db
        .select({ hours: packs.hours, priceMinor: packs.priceMinor, currency: packs.currency })
        .from(packs)
        .where(and(eq(packs.region, body.Region), eq(packs.platform, platform), eq(packs.active, true)));
    let rows = await catalog(body.Platform);
    if (rows.length === 0 && body.Platform !== 'Unreal Engine') rows = await catalog('Unreal Engine');
    return {
      region: body.Region,
      platform: body.Platform,
      vms: body.VMs,
      startAt: new Date(body.StartAt),
      expiresAt: new Date(body.ExpiresAt),
      prices: priceCourse(rows, body.VMs),
    };
  }

  /** The business checkout: re-prices the order and refuses a price or runtime the server does not offer. */
  async function checkout(principal: Principal, body: CourseOrderBody): Promise<{ orderId: string; url: string }> {
    deps.billing.assertReturnUrls(body.success_url, body.cancel_url);
    const offer = await quote(body);
    const option = offer.prices.find((p) => p.hours === body.TotalHours);
    if (!option) throw new BadRequest(HOURS_UNAVAILABLE, 'course-hours');
    if (!Number.isFinite(body.Price) || Math.round(body.Price * 100) !== option.amountMinor) throw new BadRequest(PRICE_CHANGED, 'price-changed');
    const country = countryById(body.Region)?.label ?? body.Region;
    const dates = formatCourseDates(offer.startAt, offer.expiresAt, body.Region);
    return deps.billing.startCheckout({
      userId: principal.uid,
      email: principal.email,
      kind: 'course',
      region: body.Region,
      platform: body.Platform,
      hours: body.TotalHours,
      vms: body.VMs,
      startAt: offer.startAt,
      expiresAt: offer.expiresAt,
      amountMinor: option.amountMinor,
      currency: option.currency,
      description: `${body.VMs} × ${body.TotalHours} hours · ${body.Platform} · ${country} · ${dates}`,
      successUrl: body.success_url,
      cancelUrl: body.cancel_url,
    });
  }

  /** One pass of the course-end job: stops the running machines of ended courses and frees their seats. */
  /**
   * Course data retention: the students' homes of a course are deleted COURSE_HOME_RETENTION_DAYS after it ended
   * (provider first, then the record, so a crash in between only repeats an idempotent delete).
   */
  async function removeExpiredHomes(): Promise<number> {
    const cutoff = new Date(clock.now().getTime() - COURSE_HOME_RETENTION_DAYS * 86_400_000);
    const due = await db
      .select({ courseId: courseHomes.courseId, userId: courseHomes.userId, homeKey: courseHomes.homeKey })
      .from(courseHomes)
      .innerJoin(courses, eq(courses.id, courseHomes.courseId))
      .where(lte(courses.endAt, cutoff));
    for (const h of due) {
      await deps.machines.provider.removeHome?.(h.homeKey);
      await db.delete(courseHomes).where(and(eq(courseHomes.courseId, h.courseId), eq(courseHomes.userId, h.userId)));
    }
    return due.length;
  }

  async function endDueCourses(): Promise<number> {
    const now = clock.now();
    const running = await db
      .select({ id: machines.id, courseId: courses.id, ownerId: courses.ownerUserId })
      .from(machines)
      .innerJoin(courses, eq(courses.id, machines.courseId))
      .where(and(lte(courses.endAt, now), eq(machines.desired, 'running')));
    const seated = await db
      .selectDistinct({ courseId: courses.id, ownerId: courses.ownerUserId })
      .from(seats)
      .innerJoin(courses, eq(courses.id, seats.courseId))
      .where(lte(courses.endAt, now));
    const byCourse = new Map<string, { ownerId: string; ids: string[] }>();
    const entry = (courseId: string, ownerId: string) => {
      const c = byCourse.get(courseId) ?? { ownerId, ids: [] };
      byCourse.set(courseId, c);
      return c;
    };
    for (const r of running) entry(r.courseId, r.ownerId).ids.push(r.id);
    for (const r of seated) entry(r.courseId, r.ownerId);
    for (const [courseId, c] of byCourse) {
      const released = await transaction(db, async (tx) => {
        if (c.ids.length) await deps.machines.requestStop(tx, c.ids, COURSE_ENDED);
        return releaseCourseSeats(tx, courseId);
      });
      await notify(courseId, c.ownerId, released);
    }
    return byCourse.size;
  }

  const members = createRosterMembers({
    db,
    clock,
    publicUrl: deps.publicUrl,
    inviteDailyLimit: deps.inviteDailyLimit,
    mailer: deps.mailer,
    ownCourse,
    notify,
  });

  return {
    quote,
    checkout,

    /** The roster one address at a time (./roster-members): list with states and seats, add, remove, resend. */
    roster: members,

    /** An instructor ends one student's session (./seat-sessions). */
    seatSessions: createSeatSessions({ db, clock, ownCourse, notify }),

    /** Billing calls this for a paid order of kind 'course', inside its fulfilment transaction. */
    fulfilCourseOrder: (tx: Queryable, order: Pick<OrderRow, 'id'>) => fulfilCourseOrder(tx, deps.ledger, order),

    /** Start All: every machine of the course that has hours left; idempotent (machines exist since payment). */
    async startAll(principal: Principal, courseId: string): Promise<'WAIT' | 'RUNNING' | 'FAILED'> {
      const now = clock.now();
      // Read before the transaction: a provider that cannot run desktops here answers FAILED (as the slot call does).
      const unavailable = (await deps.machines.provider.preflight?.()) ?? null;
      const status = await transaction(db, async (tx) => {
        // The course row lock serializes Start All / Stop All of one course (parallel clicks ask for one start).
        const course = await ownCourse(tx, principal, courseId, true);
        if (!(await accountActive(tx, principal.uid))) throw new NotFound('Course not found.');
        if (now < course.startAt) throw new Conflict(COURSE_NOT_STARTED, 'course-not-started');
        if (now >= course.endAt) throw new Conflict(COURSE_ENDED, 'course-ended');
        const rows = await tx
          .select({ id: machines.id, desired: machines.desired, observed: machines.observed })
          .from(machines)
          .where(eq(machines.courseId, course.id));
        const asked = rows.filter((m) => m.desired === 'running' && m.observed !== 'offline');
        const idle = rows.filter((m) => !asked.includes(m));
        const startable: string[] = [];
        for (const m of idle) if ((await deps.ledger.remainingMinutes(tx, m.id, now)) > 0) startable.push(m.id);
        if (asked.length === 0 && startable.length === 0) throw new Conflict(NO_HOURS_LEFT, 'no-hours');
        if (startable.length) {
          if (unavailable) return 'FAILED';
          await assignHomes(tx, course.id, startable);
          await deps.machines.requestStart(tx, startable);
          return 'WAIT';
        }
        return asked.every((m) => m.observed === 'online') ? 'RUNNING' : 'WAIT';
      });
      await notify(courseId, principal.uid);
      return status;
    },

    /** Stop All: every machine of the course; seats are freed so open sessions end. */
    async stopAll(principal: Principal, courseId: string): Promise<void> {
      const seated = await transaction(db, async (tx) => {
        const course = await ownCourse(tx, principal, courseId, true);
        await deps.machines.requestStop(tx, await machineIdsOf(tx, course.id));
        return releaseCourseSeats(tx, course.id);
      });
      await notify(courseId, principal.uid, seated);
    },

    /**
     * Replaces the roster with the uploaded list in one transaction: students added get an invitation e-mail
     * (outbox, same transaction) within the limits of ./invitations; students removed lose their seat at once, and
     * their dashboards and open sessions are told after commit (the gateway re-checks access and closes the session).
     */
    async replaceRoster(principal: Principal, courseId: string, parsed: ParsedRoster): Promise<RosterSummary> {
      if (parsed.emails.length === 0) throw new BadRequest('No e-mail addresses were found in the file.', 'roster-empty');
      if (parsed.emails.length > MAX_ROSTER) throw new BadRequest(`A course list can have at most ${MAX_ROSTER} e-mail addresses.`, 'roster-too-long');
      const now = clock.now();
      const limit = deps.inviteDailyLimit;
      const result = await db.transaction(async (tx) => {
        const course = await ownCourse(tx, principal, courseId, true);
        const cap = maxRoster(course.vms);
        if (parsed.emails.length > cap) {
          throw new BadRequest(`This course has ${course.vms} machine${course.vms === 1 ? '' : 's'}, so its list can have at most ${cap} e-mail addresses.`, 'roster-too-long');
        }
        const before = new Set((await tx.select({ email: roster.email }).from(roster).where(eq(roster.courseId, course.id))).map((r) => r.email));
        const after = new Set(parsed.emails);
        const added = parsed.emails.filter((e) => !before.has(e));
        const removed = [...before].filter((e) => !after.has(e));
        let lostAccess: string[] = [];
        if (removed.length) {
          await tx.delete(roster).where(and(eq(roster.courseId, course.id), inArray(roster.email, removed)));
          const gone = await tx.select({ id: users.id }).from(users).where(inArray(users.email, removed));
          lostAccess = gone.map((u) => u.id);
          await releaseSeatsOf(tx, course.id, lostAccess);
        }
        if (added.length) await tx.insert(roster).values(added.map((email) => ({ courseId: course.id, email, addedAt: now }))).onConflictDoNothing();
        const plan = await planInvitations(tx, { courseId: course.id, instructorId: principal.uid, list: parsed.emails, added: new Set(added), now, dailyLimit: limit });
        await sendInvitations(tx, deps, { course, instructorName: principal.name, emails: plan.send, now });
        const summary = { added: added.length, removed: removed.length, total: after.size, invited: plan.send.length, notices: invitationNotices(plan, limit) };
        return { summary, lostAccess };
      });
      await notify(courseId, principal.uid, result.lostAccess);
      return { ...result.summary, invalid: parsed.invalid };
    },

    endDueCourses,
    removeExpiredHomes,

    job(intervalMs = 60_000): Job {
      return {
        name: 'course-end',
        intervalMs,
        runOnce: async () => {
          await endDueCourses();
          await removeExpiredHomes();
        },
      };
    },
  };
}
