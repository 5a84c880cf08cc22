/**
 * Who gets a course invitation e-mail on a roster upload (issue 11: the upload must not be a mail cannon).
 * An address is mailed when it is new on the list or was never invited to the course, but at most once a day per
 * course (alternating two lists re-sends nothing), and each instructor has a daily budget of invitation e-mails
 * across all their courses (INVITE_DAILY_LIMIT). Runs inside the upload's transaction; the instructor's user row is
 * locked so two uploads at once cannot both spend the same budget. Adding one address or resending one invitation
 * (roster-members.ts) goes through the same plan.
 */
import { and, count, eq, gt, inArray, max } from 'drizzle-orm';
import { formatCourseDates } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { courses, rosterInvitations, users } from '../../db/schema/index';
import { INVITE_VERIFY_TTL_MS, issueVerificationLink } from '../identity/verification';
import type { Mailer, OutgoingMail } from '../mail/service';

export const INVITE_AGAIN_AFTER_MS = 24 * 60 * 60 * 1000;
/** At most this many addresses per machine of the course, and never more than MAX_ROSTER. */
export const ROSTER_PER_VM = 10;
export const MAX_ROSTER = 400;

export const maxRoster = (vms: number) => Math.min(MAX_ROSTER, ROSTER_PER_VM * vms);

export interface InvitationPlan {
  send: string[];
  /** Added again within a day of their last invitation to this course. */
  alreadyInvited: number;
  /** Left out because the instructor's daily budget was spent. */
  overBudget: number;
}

export async function planInvitations(
  tx: Queryable,
  o: { courseId: string; instructorId: string; list: string[]; added: Set<string>; now: Date; dailyLimit: number },
): Promise<InvitationPlan> {
  const since = new Date(o.now.getTime() - INVITE_AGAIN_AFTER_MS);
  await tx.select({ id: users.id }).from(users).where(eq(users.id, o.instructorId)).for('update');
  const last = new Map<string, Date>();
  if (o.list.length) {
    const rows = await tx
      .select({ email: rosterInvitations.email, at: max(rosterInvitations.sentAt) })
      .from(rosterInvitations)
      .where(and(eq(rosterInvitations.courseId, o.courseId), inArray(rosterInvitations.email, o.list)))
      .groupBy(rosterInvitations.email);
    for (const r of rows) if (r.at) last.set(r.email, new Date(r.at));
  }
  let alreadyInvited = 0;
  const wanted: string[] = [];
  for (const email of o.list) {
    const at = last.get(email);
    if (!at) wanted.push(email);
    else if (o.added.has(email)) {
      if (at > since) alreadyInvited += 1;
      else wanted.push(email);
    }
  }
  const [used] = await tx
    .select({ n: count() })
    .from(rosterInvitations)
    .where(and(eq(rosterInvitations.instructorId, o.instructorId), gt(rosterInvitations.sentAt, since)));
  const budget = Math.max(0, o.dailyLimit - Number(used?.n ?? 0));
  const send = wanted.slice(0, budget);
  if (send.length) {
    await tx.insert(rosterInvitations).values(send.map((email) => ({ courseId: o.courseId, email, instructorId: o.instructorId, sentAt: o.now })));
  }
  return { send, alreadyInvited, overBudget: wanted.length - send.length };
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** What the upload answer says was limited; the web shows these lines as they are. */
export function invitationNotices(plan: InvitationPlan, dailyLimit: number): string[] {
  const out: string[] = [];
  if (plan.alreadyInvited) {
    out.push(`${plural(plan.alreadyInvited, 'invitation was', 'invitations were')} not sent again: already invited today.`);
  }
  if (plan.overBudget) {
    out.push(
      `${plural(plan.overBudget, 'invitation was', 'invitations were')} not sent: you reached today's limit of ${dailyLimit} invitation e-mails. ` +
        'Those students are on the list; upload it again tomorrow to invite them.',
    );
  }
  return out;
}

/** The addresses among `emails` that have an account (their invitation opens Login, the others' Sign Up). */
async function accountsAmong(q: Queryable, emails: string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const rows = await q.select({ email: users.email }).from(users).where(inArray(users.email, emails));
  return new Set(rows.map((r) => r.email));
}

/**
 * The landing page link of an invitation: it opens the Sign Up popup for a new address, the Login popup for one that
 * has an account, with the address filled in (web: pages/Landing/useAuthLink.ts).
 */
export function invitationLink(publicUrl: string, email: string, hasAccount: boolean): string {
  return `${publicUrl}/?${hasAccount ? 'login' : 'signup'}=1&email=${encodeURIComponent(email)}`;
}

type CourseRow = typeof courses.$inferSelect;

/**
 * Queues one invitation e-mail per address (outbox, in the caller's transaction). The invitation proves the address
 * too: its verification link verifies whoever holds (or signs up with) this e-mail.
 */
export async function sendInvitations(
  tx: Queryable,
  deps: { mailer: Pick<Mailer, 'enqueue'>; publicUrl: string },
  o: { course: CourseRow; instructorName: string; emails: string[]; now: Date },
): Promise<void> {
  const members = await accountsAmong(tx, o.emails);
  for (const email of o.emails) {
    const verify = await issueVerificationLink(tx, { email, userId: null, now: o.now, publicUrl: deps.publicUrl, ttlMs: INVITE_VERIFY_TTL_MS });
    await deps.mailer.enqueue(tx, invitation(email, o.course, o.instructorName, deps.publicUrl, verify, members.has(email)));
  }
}

function invitation(email: string, course: CourseRow, instructor: string, publicUrl: string, verifyLink: string, hasAccount: boolean): OutgoingMail {
  const who = instructor.trim() || 'Your instructor';
  const dates = formatCourseDates(course.startAt, course.endAt, course.region);
  const text = [
    'Hello,',
    '',
    `${who} added you to ${course.name} (${dates}) on Hyperdesk.`,
    hasAccount
      ? `Log in with your account (${email}) to use your course machine from Chrome:`
      : `Sign up with this e-mail address (${email}) to use your course machine from Chrome:`,
    invitationLink(publicUrl, email, hasAccount),
    '',
    hasAccount
      ? 'Then open this link to confirm the address (it works once, for 14 days):'
      : 'Then open this link to confirm the address (once signed up; it works once, for 14 days):',
    verifyLink,
    '',
    'Your machine can be used once your instructor has started it.',
  ].join('\n');
  return { to: email, subject: `You're invited to ${course.name}`, text, kind: 'course-invitation' };
}
