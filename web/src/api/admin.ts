import { infiniteQueryOptions } from '@tanstack/react-query';
import type { z } from 'zod';
import {
  AdjustmentAnswer,
  AdminAdjustmentPage,
  AdminCoursePage,
  AdminMachine,
  AdminMachinePage,
  AdminMail,
  AdminMailPage,
  AdminMessagePage,
  AdminOrder,
  AdminOrderPage,
  AdminUser,
  AdminUserPage,
  AuditPage,
  type AdjustmentBody,
  type AdminClaim,
  type FleetState,
  type MachineAction,
  type UserAction,
} from '@hyperdesk/contract';
import { download, request } from './http';

/** The operator console's calls (/v1/admin/*). Lists are keyset pages: TanStack's infinite queries follow `next`. */

export const adminKey = ['admin'] as const;
const PAGE = 25;

type Filters = Record<string, string | undefined>;

function pages<S extends z.ZodType<{ next: string | null }>>(name: string, path: string, schema: S, filters: Filters, refetchInterval?: number) {
  return infiniteQueryOptions({
    queryKey: [...adminKey, name, filters],
    queryFn: ({ pageParam }): Promise<z.infer<S>> => {
      const qs = new URLSearchParams({ limit: String(PAGE) });
      for (const [k, v] of Object.entries(filters)) if (v) qs.set(k, v);
      if (pageParam) qs.set('after', pageParam);
      return request('GET', `${path}?${qs}`, { schema }) as Promise<z.infer<S>>;
    },
    initialPageParam: '',
    getNextPageParam: (last: { next: string | null }) => last.next ?? undefined,
    refetchInterval,
  });
}

export const adminUsersQuery = (q: string) => pages('users', '/v1/admin/users', AdminUserPage, { q });
/** The fleet refreshes every 5 seconds while shown (live states). */
export const adminFleetQuery = (q: string, state: FleetState) => pages('fleet', '/v1/admin/fleet', AdminMachinePage, { q, state }, 5_000);
export const adminOrdersQuery = (q: string, status: string) => pages('orders', '/v1/admin/orders', AdminOrderPage, { q, status });
export const adminCoursesQuery = (q: string) => pages('courses', '/v1/admin/courses', AdminCoursePage, { q });
export const adminMessagesQuery = (q: string, source: string) => pages('messages', '/v1/admin/messages', AdminMessagePage, { q, source });
/** Outgoing mail refreshes every 10 seconds while shown (a queued mail turns sent or failed by itself). */
export const adminMailQuery = (q: string, state: string) => pages('mail', '/v1/admin/mail', AdminMailPage, { q, state }, 10_000);
export const adminAdjustmentsQuery = (q: string) => pages('adjustments', '/v1/admin/adjustments', AdminAdjustmentPage, { q });
export interface AuditFilters {
  actor?: string;
  action?: string;
  target?: string;
}
export const adminAuditQuery = (f: AuditFilters) => pages('audit', '/v1/admin/audit', AuditPage, { ...f });

/** The audit log as CSV with the same filters (every matching entry, not one page). */
export function downloadAuditCsv(f: AuditFilters) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) qs.set(k, v);
  return download(`/v1/admin/audit.csv?${qs}`);
}

export const setUserClaim = (uid: string, claim: AdminClaim, value: boolean) =>
  request('POST', `/v1/admin/users/${encodeURIComponent(uid)}/claims`, { body: { claim, value }, schema: AdminUser });

export const runUserAction = (uid: string, action: UserAction) =>
  request('POST', `/v1/admin/users/${encodeURIComponent(uid)}/${action}`, { body: {}, schema: AdminUser });

export const runMachineAction = (id: string, action: MachineAction) =>
  request('POST', `/v1/admin/machines/${encodeURIComponent(id)}/${action}`, { body: {}, schema: AdminMachine });

export const refulfilOrder = (id: string) =>
  request('POST', `/v1/admin/orders/${encodeURIComponent(id)}/fulfil`, { body: {}, schema: AdminOrder });

export const resendMail = (id: string) => request('POST', `/v1/admin/mail/${encodeURIComponent(id)}/resend`, { body: {}, schema: AdminMail });

export const adjustHours = (body: AdjustmentBody) => request('POST', '/v1/admin/adjustments', { body, schema: AdjustmentAnswer });
