import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ErrorBody, ReceiptQuery, ReceiptsAnswer, Receipt, UsageAnswer, UsageCsvQuery, UsageQuery } from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';
import { csvField } from '../admin/audit';
import { usageOf } from './history';
import { receiptOf, receiptsOf } from './receipts';
import { receiptPdf } from './receipt-pdf';

const tags = ['usage'];
const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody };
const csvLine = (cells: (string | number | null)[]) => cells.map((c) => csvField(c === null ? '' : String(c))).join(',') + '\r\n';
/** A file name from a machine or course name: letters, digits and dashes. */
const fileName = (name: string) => name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'usage';

/** Usage history with CSV export, and receipts (issue 22.4): the caller's own machines, courses and orders only. */
export async function usageRoutes(app: FastifyInstance, ctx: Ctx): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = { preHandler: app.authenticate };

  r.get('/user/usage', { ...auth, schema: { tags, summary: 'When a machine (or a course’s machines) ran, and its students’ sessions', querystring: UsageQuery, response: { 200: UsageAnswer, ...errors } } }, async (req) =>
    usageOf(ctx.db, principalOf(req).uid, req.query.packId, ctx.clock.now()),
  );

  r.get('/user/usage.csv', { ...auth, schema: { tags, summary: 'The usage history as CSV (view=machines or students)', querystring: UsageCsvQuery, response: errors } }, async (req, reply) => {
    const usage = await usageOf(ctx.db, principalOf(req).uid, req.query.packId, ctx.clock.now());
    const students = req.query.view === 'students';
    const rows = students
      ? [csvLine(['student', 'machine', 'start', 'end', 'hours']), ...(usage.students ?? []).map((s) => csvLine([s.student, s.machineName, s.start, s.end, s.hours]))]
      : [csvLine(['machine', 'start', 'end', 'hours']), ...usage.runs.map((u) => csvLine([u.machineName, u.start, u.end, u.hours]))];
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${fileName(usage.machineName)}-${students ? 'students' : 'usage'}.csv"`)
      .header('cache-control', 'no-store')
      .send(rows.join('') as never); // text, not the JSON schema's shape
  });

  r.get('/user/receipts', { ...auth, schema: { tags, summary: 'Receipts of the caller’s paid orders', response: { 200: ReceiptsAnswer, 401: ErrorBody } } }, async (req) => ({
    receipts: await receiptsOf(ctx.db, principalOf(req).uid),
  }));

  r.get('/user/receipt', { ...auth, schema: { tags, summary: 'One receipt', querystring: ReceiptQuery, response: { 200: Receipt, ...errors } } }, async (req) =>
    receiptOf(ctx.db, principalOf(req).uid, req.query.orderId),
  );

  r.get('/user/receipt.pdf', { ...auth, schema: { tags, summary: 'One receipt as PDF', querystring: ReceiptQuery, response: errors } }, async (req, reply) => {
    const receipt = await receiptOf(ctx.db, principalOf(req).uid, req.query.orderId);
    const pdf = await receiptPdf(receipt, { name: 'Hyperdesk', url: ctx.config.publicUrl });
    return reply
      .type('application/pdf')
      .header('content-disposition', `attachment; filename="hyperdesk-receipt-${receipt.number}.pdf"`)
      .header('cache-control', 'no-store')
      .send(pdf as never);
  });
}
