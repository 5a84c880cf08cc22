import { sql, type SQL } from 'drizzle-orm';
import type {
  AdminAdjustment,
  AdminAdjustmentPage,
  AdminCourse,
  AdminCoursePage,
  AdminMessage,
  AdminMessagePage,
  AdminOrder,
  AdminOrderPage,
  MessagesQuery,
  OrdersQuery,
} from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { MAX_ATTEMPTS } from '../mail/service';
import { beforeTimeId, decodeCursor, iso, isoOrNull, likeOf, pageOf, userIdFilter, UUID_RE } from './cursor';

type ListOpts = { after?: string; limit: number; q?: string };
const rowsOf = async <T>(q: Queryable, query: SQL) => (await q.execute(query)).rows as T[];

/**
 * `q` as an exact id when it is a uuid; else the rows of users whose e-mail or name contains it (`userCols`, through
 * the users' trigram indexes), rows whose small text columns contain it, or whose `exactCols` equal it.
 */
async function searchBy(q: Queryable, text: string | undefined, o: { ids: SQL[]; userCols?: SQL[]; textCols?: SQL[]; exactCols?: SQL[] }): Promise<SQL> {
  if (!text) return sql`true`;
  if (UUID_RE.test(text)) return sql`(${sql.join(o.ids.map((c) => sql`${c} = ${text}::uuid`), sql` or `)})`;
  const like = likeOf(text);
  const byUser = o.userCols?.length ? await userIdFilter(q, text) : null;
  const terms = [
    ...(o.userCols ?? []).map((c) => byUser!(c)),
    ...(o.textCols ?? []).map((c) => sql`${c} ilike ${like}`),
    ...(o.exactCols ?? []).map((c) => sql`${c} = ${text}`),
  ];
  return sql`(${sql.join(terms, sql` or `)})`;
}

// ---- Orders ----
type OrderRow = {
  id: string; k: string; user_email: string | null; kind: 'single' | 'course'; status: AdminOrder['status'];
  amount_minor: number | string; currency: string; hours: number; vms: number; provider: string;
  provider_session_id: string | null; payment_method: string | null; created_at: unknown; paid_at: unknown;
  fulfilled_at: unknown; machine_id: string | null; course_id: string | null;
};
const toOrder = (r: OrderRow): AdminOrder => ({
  id: r.id,
  userEmail: r.user_email,
  kind: r.kind,
  status: r.status,
  amountMinor: Number(r.amount_minor),
  currency: r.currency,
  hours: Number(r.hours),
  vms: Number(r.vms),
  provider: r.provider,
  providerSessionId: r.provider_session_id,
  paymentMethod: r.payment_method,
  createdAt: iso(r.created_at),
  paidAt: isoOrNull(r.paid_at),
  fulfilledAt: isoOrNull(r.fulfilled_at),
  machineId: r.machine_id,
  courseId: r.course_id,
});
const selectOrders = (where: SQL, tail: SQL = sql``) => sql`
  select o.id, o.created_at::text as k, u.email as user_email, o.kind, o.status, o.amount_minor, o.currency, o.hours, o.vms,
    o.provider, o.provider_session_id, o.payment_method, o.created_at, o.paid_at, o.fulfilled_at, o.machine_id, o.course_id
  from orders o left join users u on u.id = o.user_id where ${where} ${tail}`;

/** Newest first; `q`: the buyer's e-mail, the provider's session id, or an order / user / machine / course id. */
export async function listOrders(q: Queryable, o: OrdersQuery): Promise<AdminOrderPage> {
  const c = decodeCursor(o.after);
  const status = o.status === 'all' ? sql`true` : sql`o.status = ${o.status}`;
  const search = await searchBy(q, o.q, { ids: [sql`o.id`, sql`o.user_id`, sql`o.machine_id`, sql`o.course_id`], userCols: [sql`o.user_id`], exactCols: [sql`o.provider_session_id`] });
  const rows = await rowsOf<OrderRow>(
    q,
    selectOrders(sql`${status} and ${search} and ${beforeTimeId(sql`o.created_at`, sql`o.id`, c)}`, sql`order by o.created_at desc, o.id desc limit ${o.limit + 1}`),
  );
  return pageOf(rows, o.limit, toOrder);
}

export async function adminOrderById(q: Queryable, id: string): Promise<AdminOrder | null> {
  const [r] = await rowsOf<OrderRow>(q, selectOrders(sql`o.id = ${id}::uuid`));
  return r ? toOrder(r) : null;
}

// ---- Courses ----
type CourseRow = {
  id: string; k: string; name: string; owner_user_id: string; instructor_email: string | null; instructor_name: string | null;
  region: string; platform: string; start_at: unknown; end_at: unknown; vms: number; hours_per_machine: number;
  roster_size: number | string; seats_in_use: number | string; machines_online: number | string;
};

/** Newest first; `q`: the course name, the instructor's e-mail, or a course id. */
export async function listCourses(q: Queryable, o: ListOpts): Promise<AdminCoursePage> {
  const c = decodeCursor(o.after);
  const search = await searchBy(q, o.q, { ids: [sql`c.id`, sql`c.owner_user_id`], userCols: [sql`c.owner_user_id`], textCols: [sql`c.name`] });
  const rows = await rowsOf<CourseRow>(q, sql`
    select c.id, c.created_at::text as k, c.name, c.owner_user_id, u.email as instructor_email, u.display_name as instructor_name,
      c.region, c.platform, c.start_at, c.end_at, c.vms, c.hours_per_machine,
      (select count(*) from roster r where r.course_id = c.id) as roster_size,
      (select count(*) from seats s where s.course_id = c.id) as seats_in_use,
      (select count(*) from machines m where m.course_id = c.id and m.observed = 'online') as machines_online
    from courses c left join users u on u.id = c.owner_user_id
    where ${search} and ${beforeTimeId(sql`c.created_at`, sql`c.id`, c)}
    order by c.created_at desc, c.id desc limit ${o.limit + 1}`);
  return pageOf(rows, o.limit, (r): AdminCourse => ({
    id: r.id,
    name: r.name,
    instructor: { uid: r.owner_user_id, email: r.instructor_email, name: r.instructor_name },
    region: r.region,
    platform: r.platform,
    startAt: iso(r.start_at),
    endAt: iso(r.end_at),
    vms: Number(r.vms),
    hoursPerMachine: Number(r.hours_per_machine),
    rosterSize: Number(r.roster_size),
    seatsInUse: Number(r.seats_in_use),
    machinesOnline: Number(r.machines_online),
  }));
}

// ---- Messages ----
type MessageRow = {
  id: string; k: string; source: string; name: string; email: string; query: string; recipient: string; user_id: string | null;
  created_at: unknown; mail_id: string | null; sent_at: unknown; attempts: number | null; last_error: string | null; failed_at: unknown;
};

/** The outbox row shares the message's id: its state is the message's delivery. */
function deliveryOf(r: MessageRow): AdminMessage['delivery'] {
  if (!r.mail_id) return 'unknown';
  if (r.sent_at !== null) return Number(r.attempts ?? 0) === 0 ? 'outbox' : 'sent';
  return r.failed_at !== null || Number(r.attempts ?? 0) >= MAX_ATTEMPTS ? 'failed' : 'pending';
}

/** Newest first; `q`: the sender's e-mail or name, or words of the query. */
export async function listMessages(q: Queryable, o: MessagesQuery): Promise<AdminMessagePage> {
  const c = decodeCursor(o.after);
  const source = o.source === 'all' ? sql`true` : sql`m.source = ${o.source}`;
  const search = await searchBy(q, o.q, { ids: [sql`m.id`, sql`m.user_id`], textCols: [sql`m.email`, sql`m.name`, sql`m.query`] });
  const rows = await rowsOf<MessageRow>(q, sql`
    select m.id, m.created_at::text as k, m.source, m.name, m.email, m.query, m.recipient, m.user_id, m.created_at,
      mo.id as mail_id, mo.sent_at, mo.attempts, mo.last_error, mo.failed_at
    from contact_messages m left join mail_outbox mo on mo.id = m.id
    where ${source} and ${search} and ${beforeTimeId(sql`m.created_at`, sql`m.id`, c)}
    order by m.created_at desc, m.id desc limit ${o.limit + 1}`);
  return pageOf(rows, o.limit, (r): AdminMessage => ({
    id: r.id,
    source: r.source === 'support' ? 'support' : 'contact',
    name: r.name,
    email: r.email,
    query: r.query,
    recipient: r.recipient,
    signedIn: r.user_id !== null,
    createdAt: iso(r.created_at),
    delivery: deliveryOf(r),
    attempts: Number(r.attempts ?? 0),
    lastError: r.last_error,
  }));
}

// ---- Hours adjustments ----
type AdjustmentRow = {
  id: string; k: string; machine_id: string; machine_name: string; owner_email: string | null; minutes: number; note: string | null; created_at: unknown;
};

/** Ledger `adjustment` rows, newest first; `q`: the owner's e-mail, the machine's name, or a machine id. */
export async function listAdjustments(q: Queryable, o: ListOpts): Promise<AdminAdjustmentPage> {
  const c = decodeCursor(o.after);
  const search = await searchBy(q, o.q, { ids: [sql`e.machine_id`], userCols: [sql`m.owner_user_id`], textCols: [sql`m.name`, sql`e.note`] });
  const rows = await rowsOf<AdjustmentRow>(q, sql`
    select e.id, e.created_at::text as k, e.machine_id, m.name as machine_name, u.email as owner_email, e.minutes, e.note, e.created_at
    from ledger_entries e join machines m on m.id = e.machine_id left join users u on u.id = m.owner_user_id
    where e.kind = 'adjustment' and ${search} and ${beforeTimeId(sql`e.created_at`, sql`e.id`, c)}
    order by e.created_at desc, e.id desc limit ${o.limit + 1}`);
  return pageOf(rows, o.limit, (r): AdminAdjustment => ({
    id: r.id,
    machineId: r.machine_id,
    machineName: r.machine_name,
    ownerEmail: r.owner_email,
    minutes: Number(r.minutes),
    reason: r.note ?? '',
    createdAt: iso(r.created_at),
  }));
}
