/**
 * The roster one address at a time (issue 22): the instructor sees each address with how far it got (invited,
 * verified, joined, connected now) and its seat, adds or removes one address without uploading the list again, and
 * resends one invitation within the same limits as an upload (./invitations: once a day per address and course,
 * INVITE_DAILY_LIMIT a day per instructor). Every call is on the caller's own course (another's is a 404).
 */
import { and, eq, sql } from 'drizzle-orm';
import type { RosterAnswer, RosterInviteAnswer, RosterStudent } from '@hyperdesk/contract';
import type { Db, Queryable } from '../../db/client';
import { courses, roster, users } from '../../db/schema/index';
import { BadRequest, Conflict, NotFound, TooMany } from '../../errors';
import type { Clock } from '../../lib/clock';
import type { Principal } from '../identity/tokens';
import type { Mailer } from '../mail/service';
import { INVITE_AGAIN_AFTER_MS, maxRoster, planInvitations, sendInvitations } from './invitations';
import { isEmail } from './roster';
import { releaseSeatsOf, SEAT_STALE_MS } from './seats';

export const COURSE_OVER = 'The course has ended.';
export const NOT_ON_LIST = 'This address is not on the student list.';

type CourseRow = typeof courses.$inferSelect;

export interface RosterMembersDeps {
  db: Db;
  clock: Clock;
  publicUrl: string;
  inviteDailyLimit: number;
  mailer: Pick<Mailer, 'enqueue'>;
  /** The caller's course, row-locked with `lock`, or a 404 (courses/service.ts). */
  ownCourse(q: Queryable, principal: Principal, courseId: string, lock?: boolean): Promise<CourseRow>;
  /** Tells the dashboards of the course's owner, its verified students and `extra` users that it changed. */
  notify(courseId: string, ownerId: string, extra?: string[]): Promise<void>;
}

interface Row {
  email: string;
  added_at: string | Date;
  signed_up: boolean;
  verified: boolean;
  joined: boolean;
  seat: string | null;
  invited_at: string | Date | null;
}

const iso = (v: string | Date) => new Date(v).toISOString();

function stateOf(r: Row): RosterStudent['state'] {
  if (!r.verified) return 'invited';
  if (r.seat) return 'connected';
  return r.joined ? 'joined' : 'verified';
}

function normalized(email: string): string {
  const e = email.trim().toLowerCase();
  if (!isEmail(e)) throw new BadRequest('Enter a valid e-mail address.', 'roster-email');
  return e;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function createRosterMembers(deps: RosterMembersDeps) {
  const { db, clock } = deps;

  /** One statement: every address with its account, seat now, first use of the course and last invitation. */
  async function list(principal: Principal, courseId: string): Promise<RosterAnswer> {
    const course = await deps.ownCourse(db, principal, courseId);
    const now = clock.now();
    const res = await db.execute(sql`
      select r.email, r.added_at, u.id is not null as signed_up, coalesce(u.email_verified_at is not null, false) as verified,
        exists (select 1 from course_homes h where h.course_id = r.course_id and h.user_id = u.id and h.joined_at is not null) as joined,
        (select m.name from seats s join machines m on m.id = s.machine_id
          where s.course_id = r.course_id and s.user_id = u.id
            and s.last_seen_at >= ${new Date(now.getTime() - SEAT_STALE_MS).toISOString()}::timestamptz) as seat,
        (select max(i.sent_at) from roster_invitations i where i.course_id = r.course_id and i.email = r.email) as invited_at
      from roster r left join users u on u.email = r.email
      where r.course_id = ${course.id}::uuid
      order by r.email`);
    const students = (res.rows as unknown as Row[]).map((r) => ({
      email: r.email,
      state: stateOf(r),
      signedUp: Boolean(r.signed_up),
      seat: r.verified ? r.seat : null,
      invitedAt: r.invited_at ? iso(r.invited_at) : null,
      addedAt: iso(r.added_at),
    }));
    return { students, max: maxRoster(course.vms) };
  }

  /** A course that still runs (an ended course's list changes nothing for anyone). */
  function assertRunning(course: CourseRow, now: Date): void {
    if (now >= course.endAt) throw new Conflict(COURSE_OVER, 'course-ended');
  }

  /** Adds one address and invites it (within the limits: the answer says when no invitation went out). */
  async function add(principal: Principal, courseId: string, rawEmail: string): Promise<RosterInviteAnswer> {
    const email = normalized(rawEmail);
    const now = clock.now();
    const answer = await db.transaction(async (tx) => {
      const course = await deps.ownCourse(tx, principal, courseId, true);
      assertRunning(course, now);
      const [{ n }] = (await tx.execute(sql`select count(*)::int as n from roster where course_id = ${course.id}::uuid`)).rows as [{ n: number }];
      const [listed] = await tx.select({ email: roster.email }).from(roster).where(and(eq(roster.courseId, course.id), eq(roster.email, email)));
      if (listed) throw new Conflict(`${email} is already on the student list.`, 'roster-duplicate');
      const cap = maxRoster(course.vms);
      if (Number(n) >= cap) {
        throw new Conflict(`This course has ${course.vms} machine${course.vms === 1 ? '' : 's'}, so its list can have at most ${cap} e-mail addresses.`, 'roster-full');
      }
      await tx.insert(roster).values({ courseId: course.id, email, addedAt: now });
      const plan = await planInvitations(tx, { courseId: course.id, instructorId: principal.uid, list: [email], added: new Set([email]), now, dailyLimit: deps.inviteDailyLimit });
      await sendInvitations(tx, deps, { course, instructorName: principal.name, emails: plan.send, now });
      const notices: string[] = [];
      if (plan.alreadyInvited) notices.push(`${email} was invited less than a day ago, so no invitation was sent again.`);
      if (plan.overBudget) {
        notices.push(`No invitation was sent: you reached today's limit of ${plural(deps.inviteDailyLimit, 'invitation e-mail', 'invitation e-mails')}. Resend it tomorrow.`);
      }
      return { email, invited: plan.send.length > 0, notices };
    });
    await deps.notify(courseId, principal.uid);
    return answer;
  }

  /** Removes one address: its student loses their seat at once (the gateway then ends an open session). */
  async function remove(principal: Principal, courseId: string, rawEmail: string): Promise<{ email: string; removed: true }> {
    const email = normalized(rawEmail);
    const lostAccess = await db.transaction(async (tx) => {
      const course = await deps.ownCourse(tx, principal, courseId, true);
      const gone = await tx.delete(roster).where(and(eq(roster.courseId, course.id), eq(roster.email, email))).returning({ email: roster.email });
      if (!gone.length) throw new NotFound(NOT_ON_LIST, 'roster-not-listed');
      const holders = await tx.select({ id: users.id }).from(users).where(eq(users.email, email));
      await releaseSeatsOf(tx, course.id, holders.map((u) => u.id));
      return holders.map((u) => u.id);
    });
    await deps.notify(courseId, principal.uid, lostAccess);
    return { email, removed: true };
  }

  /** Sends the invitation of one listed address again: refused (429) within a day of the last one or over the budget. */
  async function resend(principal: Principal, courseId: string, rawEmail: string): Promise<RosterInviteAnswer> {
    const email = normalized(rawEmail);
    const now = clock.now();
    return db.transaction(async (tx) => {
      const course = await deps.ownCourse(tx, principal, courseId, true);
      assertRunning(course, now);
      const [listed] = await tx.select({ email: roster.email }).from(roster).where(and(eq(roster.courseId, course.id), eq(roster.email, email)));
      if (!listed) throw new NotFound(NOT_ON_LIST, 'roster-not-listed');
      const plan = await planInvitations(tx, { courseId: course.id, instructorId: principal.uid, list: [email], added: new Set([email]), now, dailyLimit: deps.inviteDailyLimit });
      if (plan.alreadyInvited) {
        throw new TooMany(`${email} was invited less than a day ago. You can send the invitation again ${Math.round(INVITE_AGAIN_AFTER_MS / 3_600_000)} hours after the last one.`, 'invite-too-soon');
      }
      if (plan.overBudget) {
        throw new TooMany(`You reached today's limit of ${plural(deps.inviteDailyLimit, 'invitation e-mail', 'invitation e-mails')}. Please try again tomorrow.`, 'invite-limit');
      }
      await sendInvitations(tx, deps, { course, instructorName: principal.name, emails: plan.send, now });
      return { email, invited: true, notices: [] };
    });
  }

  return { list, add, remove, resend };
}
