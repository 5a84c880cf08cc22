import { z } from 'zod';
import { InstanceStatus } from './common';

/**
 * The operator console's /v1/admin/* calls (issue 15.2). Every call needs the `idtoken` header of a user whose
 * verified token carries the `admin` claim. Lists are keyset-paginated: pass the answer's `next` as `after`.
 */

export const ADMIN_PAGE_MAX = 100;
const Iso = z.string();
const Uuid = z.string().uuid();

/** Query of every list: `after` is an opaque cursor from the previous page; `q` a search text. */
export const AdminListQuery = z.object({
  after: z.string().max(300).optional(),
  limit: z.coerce.number().int().min(1).max(ADMIN_PAGE_MAX).default(25),
  q: z.string().trim().max(200).optional(),
});
export type AdminListQuery = z.infer<typeof AdminListQuery>;

export const Page = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), next: z.string().nullable() });

export const IdParam = z.object({ id: Uuid });

// ---- Users ----
export const AdminUser = z.object({
  uid: z.string(),
  email: z.string(),
  displayName: z.string(),
  instructor: z.boolean(),
  admin: z.boolean(),
  emailVerified: z.boolean(),
  disabledAt: Iso.nullable(),
  createdAt: Iso,
  /** Refresh sessions not revoked and not expired. */
  activeSessions: z.number().int(),
  /** Two-factor sign-in is on (a confirmed authenticator): an operator can reset it (a lost phone). */
  twoFactor: z.boolean(),
});
export type AdminUser = z.infer<typeof AdminUser>;
export const AdminUserPage = Page(AdminUser);
export type AdminUserPage = z.infer<typeof AdminUserPage>;

export const AdminClaim = z.enum(['instructor', 'admin']);
export type AdminClaim = z.infer<typeof AdminClaim>;
export const ClaimBody = z.object({ claim: AdminClaim, value: z.boolean() });
export type ClaimBody = z.infer<typeof ClaimBody>;
/** `reset-2fa`: removes the user's authenticator and recovery codes and ends their sessions (audited `user.totp.reset`). */
export const UserAction = z.enum(['disable', 'enable', 'revoke-sessions', 'password-reset', 'reset-2fa']);
export type UserAction = z.infer<typeof UserAction>;
export const UserActionParams = z.object({ id: Uuid, action: UserAction });

// ---- Fleet ----
export const FleetState = z.enum(['all', 'online', 'processing', 'offline', 'running', 'stopped']);
export type FleetState = z.infer<typeof FleetState>;
export const FleetQuery = AdminListQuery.extend({ state: FleetState.default('all') });
export type FleetQuery = z.infer<typeof FleetQuery>;

/** Who or what stopped a machine: its user, the course's instructor (Stop All), idle protection, its hours (used up or
 * expired), the course's end, an operator (console stop, force stop, disabled account), or a start that failed. */
export const StopKind = z.enum(['user', 'instructor', 'idle', 'hours', 'course-end', 'operator', 'failure', 'timetable', 'host-lost']);
export type StopKind = z.infer<typeof StopKind>;

export const AdminMachine = z.object({
  id: z.string(),
  name: z.string(),
  region: z.string(),
  platform: z.string(),
  owner: z.object({ uid: z.string(), email: z.string() }).nullable(),
  course: z.object({ id: z.string(), name: z.string(), instructorEmail: z.string().nullable() }).nullable(),
  desired: z.enum(['running', 'stopped']),
  observed: InstanceStatus,
  minutesLeft: z.number().int(),
  provider: z.string().nullable(),
  onlineSince: Iso.nullable(),
  /** The text the user was shown when it stopped (cleared by the next start). */
  stopReason: z.string().nullable(),
  /** The machine's last stop: who or what, and when (kept across starts). */
  lastStop: z.object({ by: StopKind, at: Iso }).nullable(),
  updatedAt: Iso,
});
export type AdminMachine = z.infer<typeof AdminMachine>;
export const AdminMachinePage = Page(AdminMachine);
export type AdminMachinePage = z.infer<typeof AdminMachinePage>;
export const MachineAction = z.enum(['start', 'stop', 'force-stop']);
export type MachineAction = z.infer<typeof MachineAction>;
export const MachineActionParams = z.object({ id: Uuid, action: MachineAction });

// ---- Orders ----
export const OrderStatusFilter = z.enum(['all', 'pending', 'paid', 'failed', 'expired']);
export type OrderStatusFilter = z.infer<typeof OrderStatusFilter>;
export const OrdersQuery = AdminListQuery.extend({ status: OrderStatusFilter.default('all') });
export type OrdersQuery = z.infer<typeof OrdersQuery>;
export const AdminOrder = z.object({
  id: z.string(),
  userEmail: z.string().nullable(),
  kind: z.enum(['single', 'course']),
  status: z.enum(['pending', 'paid', 'failed', 'expired']),
  amountMinor: z.number().int(),
  currency: z.string(),
  hours: z.number().int(),
  vms: z.number().int(),
  provider: z.string(),
  providerSessionId: z.string().nullable(),
  paymentMethod: z.string().nullable(),
  createdAt: Iso,
  paidAt: Iso.nullable(),
  /** Fulfilment result: when the purchase was delivered and to which machine / course. */
  fulfilledAt: Iso.nullable(),
  machineId: z.string().nullable(),
  courseId: z.string().nullable(),
});
export type AdminOrder = z.infer<typeof AdminOrder>;
export const AdminOrderPage = Page(AdminOrder);
export type AdminOrderPage = z.infer<typeof AdminOrderPage>;

// ---- Courses ----
export const AdminCourse = z.object({
  id: z.string(),
  name: z.string(),
  instructor: z.object({ uid: z.string(), email: z.string().nullable(), name: z.string().nullable() }),
  region: z.string(),
  platform: z.string(),
  startAt: Iso,
  endAt: Iso,
  vms: z.number().int(),
  hoursPerMachine: z.number().int(),
  rosterSize: z.number().int(),
  seatsInUse: z.number().int(),
  machinesOnline: z.number().int(),
});
export type AdminCourse = z.infer<typeof AdminCourse>;
export const AdminCoursePage = Page(AdminCourse);
export type AdminCoursePage = z.infer<typeof AdminCoursePage>;

// ---- Messages ----
export const MessageSourceFilter = z.enum(['all', 'contact', 'support']);
export type MessageSourceFilter = z.infer<typeof MessageSourceFilter>;
export const MessagesQuery = AdminListQuery.extend({ source: MessageSourceFilter.default('all') });
export type MessagesQuery = z.infer<typeof MessagesQuery>;
/** Delivery of the message's mail: in the outbox only (no SMTP), sent, waiting for a retry, or given up. */
export const MessageDelivery = z.enum(['outbox', 'sent', 'pending', 'failed', 'unknown']);
export type MessageDelivery = z.infer<typeof MessageDelivery>;
export const AdminMessage = z.object({
  id: z.string(),
  source: z.enum(['contact', 'support']),
  name: z.string(),
  email: z.string(),
  query: z.string(),
  recipient: z.string(),
  signedIn: z.boolean(),
  createdAt: Iso,
  delivery: MessageDelivery,
  attempts: z.number().int(),
  lastError: z.string().nullable(),
});
export type AdminMessage = z.infer<typeof AdminMessage>;
export const AdminMessagePage = Page(AdminMessage);
export type AdminMessagePage = z.infer<typeof AdminMessagePage>;

// ---- Outgoing mail ----
/**
 * An outgoing message's state: `queued` (waiting for its first or next try; `lastError` says why a try failed),
 * `sent` (the SMTP relay took it), `failed` (given up: refused for good, or the last try failed; `lastError` is the
 * reason), `outbox` (kept in the outbox table only: no SMTP relay was configured when it was written).
 */
export const MailState = z.enum(['queued', 'sent', 'failed', 'outbox']);
export type MailState = z.infer<typeof MailState>;
export const MailStateFilter = z.enum(['all', ...MailState.options]);
export type MailStateFilter = z.infer<typeof MailStateFilter>;
export const MailQuery = AdminListQuery.extend({ state: MailStateFilter.default('all') });
export type MailQuery = z.infer<typeof MailQuery>;
export const AdminMail = z.object({
  id: z.string(),
  to: z.string(),
  subject: z.string(),
  /** What it is: password-reset, email-verification, course-invitation, contact-contact, contact-support. */
  kind: z.string(),
  state: MailState,
  attempts: z.number().int(),
  lastError: z.string().nullable(),
  nextAttemptAt: Iso.nullable(),
  createdAt: Iso,
  sentAt: Iso.nullable(),
  failedAt: Iso.nullable(),
  resentAt: Iso.nullable(),
  resends: z.number().int(),
  /** The links in its text (verification, reset, invitation), so an operator can hand one over by other means. */
  links: z.array(z.string()),
});
export type AdminMail = z.infer<typeof AdminMail>;
export const AdminMailPage = Page(AdminMail);
export type AdminMailPage = z.infer<typeof AdminMailPage>;

// ---- Hours ----
export const ADJUST_MAX_MINUTES = 100_000;
export const AdjustmentBody = z.object({
  machineId: Uuid,
  /** Minutes to add (> 0) or take away (< 0). */
  minutes: z.number().int().min(-ADJUST_MAX_MINUTES).max(ADJUST_MAX_MINUTES).refine((m) => m !== 0, 'must not be 0'),
  reason: z.string().trim().min(3).max(500),
});
export type AdjustmentBody = z.infer<typeof AdjustmentBody>;
export const AdminAdjustment = z.object({
  id: z.string(),
  machineId: z.string(),
  machineName: z.string(),
  ownerEmail: z.string().nullable(),
  minutes: z.number().int(),
  reason: z.string(),
  createdAt: Iso,
});
export type AdminAdjustment = z.infer<typeof AdminAdjustment>;
export const AdminAdjustmentPage = Page(AdminAdjustment);
export type AdminAdjustmentPage = z.infer<typeof AdminAdjustmentPage>;
export const AdjustmentAnswer = z.object({ machineId: z.string(), minutesLeft: z.number().int() });
export type AdjustmentAnswer = z.infer<typeof AdjustmentAnswer>;

// ---- Audit ----
/**
 * Filters of the audit log (each optional, all must hold): `actor` is part of an operator's e-mail, or `cli` /
 * `cli:<os user>` for the operator CLI; `action` a prefix (`user.claim`, `mail.resend`); `target` a target's id, or
 * part of a target user's e-mail. `q` still searches all of them at once.
 */
export const AuditQuery = AdminListQuery.extend({
  actor: z.string().trim().max(200).optional(),
  action: z.string().trim().max(100).optional(),
  target: z.string().trim().max(200).optional(),
});
export type AuditQuery = z.infer<typeof AuditQuery>;
/** The CSV export: every entry matching the same filters, newest first (not paginated). */
export const AuditExportQuery = AuditQuery.omit({ after: true, limit: true });
export type AuditExportQuery = z.infer<typeof AuditExportQuery>;

/**
 * Who acted: an operator's console account, the operator CLI (`npm run admin`) run by an OS user, or an account
 * holder changing their own account (two-factor sign-in on the Profile page).
 */
export const AuditActor = z.object({
  kind: z.enum(['console', 'cli', 'account']),
  uid: z.string().nullable(),
  email: z.string().nullable(),
  osUser: z.string().nullable(),
});
export type AuditActor = z.infer<typeof AuditActor>;
export const AuditEntry = z.object({
  id: z.string(),
  at: Iso,
  actor: AuditActor,
  action: z.string(),
  targetType: z.string(),
  targetId: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;
export const AuditPage = Page(AuditEntry);
export type AuditPage = z.infer<typeof AuditPage>;
