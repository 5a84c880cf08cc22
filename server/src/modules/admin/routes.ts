import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  AdjustmentAnswer,
  AdjustmentBody,
  AdminAdjustmentPage,
  AdminCoursePage,
  AdminListQuery,
  AdminMachine,
  AdminMachinePage,
  AdminMail,
  AdminMailPage,
  AdminMessagePage,
  AdminOrder,
  AdminOrderPage,
  AdminUser,
  AdminUserPage,
  AuditExportQuery,
  AuditPage,
  AuditQuery,
  ClaimBody,
  ErrorBody,
  FleetHosts,
  FleetQuery,
  IdParam,
  MachineActionParams,
  MailQuery,
  MessagesQuery,
  Ok,
  OrdersQuery,
  UserActionParams,
} from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';
import { requireOperator } from './guard';
import { createIdentity } from '../identity/service';
import { createAdmin } from './service';
import { auditCsv, listAudit } from './audit';
import { listUsers } from './users';
import { listFleet } from './fleet';
import { listFleetHosts } from './fleet-hosts';
import { listAdjustments, listCourses, listMessages, listOrders } from './lists';
import { listMail, resendMail } from './mail';
import { ssoAdminRoutes } from '../sso/admin-routes';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

/**
 * /v1/admin/*: the operator console (issue 15.2). One hook guards the whole scope before anything is parsed: a
 * valid id token (a token we did not sign is 401), its `admin` claim, and the account still admin and enabled in
 * the database (a revoked or disabled operator's token is refused before its 15 minutes run out), and a sign-in with
 * the second factor (./guard.ts, issue 23.2). Otherwise 403.
 */
export async function adminRoutes(v1: FastifyInstance, ctx: Ctx): Promise<void> {
  const identity = createIdentity({ db: ctx.db, clock: ctx.clock, tokens: ctx.tokens, mailer: ctx.mailer, captcha: ctx.captcha, publicUrl: ctx.config.publicUrl });
  const admin = createAdmin({
    db: ctx.db,
    clock: ctx.clock,
    ledger: ctx.ledger,
    machines: ctx.machines,
    fulfilment: ctx.billing.fulfilment,
    events: ctx.events,
    sendPasswordReset: (email) => identity.forgot(email),
  });

  await v1.register(
    async (scope) => {
      scope.addHook('onRequest', async (req: FastifyRequest) => {
        await v1.authenticate(req);
        await requireOperator(ctx.db, principalOf(req));
      });
      const r = scope.withTypeProvider<ZodTypeProvider>();
      const tags = ['admin'];
      const now = () => ctx.clock.now();

      // The console asks this first: 200, or the guard's 403 naming the missing step (password, enrol, log in again).
      r.get('/access', { schema: { tags, summary: 'Whether the caller may open the console now', response: { 200: Ok, ...errors } } }, async () => ({ ok: true as const }));
      r.get('/users', { schema: { tags, summary: 'Search users by e-mail or name', querystring: AdminListQuery, response: { 200: AdminUserPage, ...errors } } }, async (req) =>
        listUsers(ctx.db, req.query, now()),
      );
      r.post('/users/:id/claims', { schema: { tags, summary: 'Grant or revoke a claim', params: IdParam, body: ClaimBody, response: { 200: AdminUser, ...errors } } }, async (req) =>
        admin.setClaim(principalOf(req), req.params.id, req.body.claim, req.body.value),
      );
      r.post('/users/:id/:action', { schema: { tags, summary: 'Disable, enable, revoke sessions, send a password reset or reset two-factor sign-in', params: UserActionParams, response: { 200: AdminUser, ...errors } } }, async (req) =>
        admin.userAction(principalOf(req), req.params.id, req.params.action),
      );

      r.get('/fleet', { schema: { tags, summary: 'Every machine with its state and hours', querystring: FleetQuery, response: { 200: AdminMachinePage, ...errors } } }, async (req) =>
        listFleet(ctx.db, req.query, now()),
      );
      r.get('/fleet/members', { schema: { tags, summary: 'The hosts (cluster members) with their load, GPUs and machines', response: { 200: FleetHosts, ...errors } } }, async () =>
        listFleetHosts(ctx.db, ctx.machines.provider),
      );
      r.post('/machines/:id/:action', { schema: { tags, summary: 'Start, stop or force stop a machine', params: MachineActionParams, response: { 200: AdminMachine, ...errors } } }, async (req) =>
        admin.machineAction(principalOf(req), req.params.id, req.params.action),
      );

      r.get('/orders', { schema: { tags, summary: 'Orders and payments', querystring: OrdersQuery, response: { 200: AdminOrderPage, ...errors } } }, async (req) =>
        listOrders(ctx.db, req.query),
      );
      r.post('/orders/:id/fulfil', { schema: { tags, summary: 'Re-run the fulfilment of an order (idempotent)', params: IdParam, response: { 200: AdminOrder, ...errors } } }, async (req) =>
        admin.refulfil(principalOf(req), req.params.id),
      );

      r.get('/courses', { schema: { tags, summary: 'Courses with roster and seats', querystring: AdminListQuery, response: { 200: AdminCoursePage, ...errors } } }, async (req) =>
        listCourses(ctx.db, req.query),
      );
      r.get('/messages', { schema: { tags, summary: 'Contact Us and Contact Support messages', querystring: MessagesQuery, response: { 200: AdminMessagePage, ...errors } } }, async (req) =>
        listMessages(ctx.db, req.query),
      );

      r.get('/mail', { schema: { tags, summary: 'Outgoing mail: recipient, kind, state (queued, sent, failed with the reason), times and links', querystring: MailQuery, response: { 200: AdminMailPage, ...errors } } }, async (req) =>
        listMail(ctx.db, req.query),
      );
      // A resend is sent at once (after commit) when an SMTP relay is configured; the audit row keeps the failure.
      const deliver = () => void ctx.mailer.flush().catch((err) => ctx.log.warn({ err }, 'mail flush after a resend failed'));
      r.post('/mail/:id/resend', { schema: { tags, summary: 'Queue an outgoing mail again (audited)', params: IdParam, response: { 200: AdminMail, ...errors } } }, async (req) =>
        resendMail(ctx.db, { sends: ctx.mailer.sends, deliver }, principalOf(req), req.params.id, now()),
      );

      r.get('/adjustments', { schema: { tags, summary: 'Hours adjustments in the ledger', querystring: AdminListQuery, response: { 200: AdminAdjustmentPage, ...errors } } }, async (req) =>
        listAdjustments(ctx.db, req.query),
      );
      r.post('/adjustments', { schema: { tags, summary: 'Add or take hours, with a reason', body: AdjustmentBody, response: { 200: AdjustmentAnswer, ...errors } } }, async (req) =>
        admin.adjustHours(principalOf(req), req.body),
      );

      r.get('/audit', { schema: { tags, summary: 'The audit log of operator and CLI actions, filtered by actor, action and target', querystring: AuditQuery, response: { 200: AuditPage, ...errors } } }, async (req) =>
        listAudit(ctx.db, req.query),
      );
      r.get(
        '/audit.csv',
        { schema: { tags, summary: 'The audit log as CSV (every entry matching the filters)', querystring: AuditExportQuery, response: { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody } } },
        async (req, reply) => {
          const day = now().toISOString().slice(0, 10);
          return reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="hyperdesk-audit-${day}.csv"`)
            .header('cache-control', 'no-store')
            .send(auditCsv(ctx.db, req.query) as never); // a stream: sent as it is read, never serialized
        },
      );
      await ssoAdminRoutes(scope, ctx);
    },
    { prefix: '/admin' },
  );
}
