import { queryOptions } from '@tanstack/react-query';
import { Receipt, ReceiptsAnswer, UsageAnswer } from '@hyperdesk/contract';
import { download, request } from './http';

/** When a machine (or a course's machines) ran, and for an instructor each student's sessions (issue 22.4). */
export const usageQuery = (packId: string) =>
  queryOptions({ queryKey: ['usage', packId], queryFn: () => request('GET', `/v1/user/usage?packId=${encodeURIComponent(packId)}`, { schema: UsageAnswer }) });

export const usageCsv = (packId: string, view: 'machines' | 'students') => download(`/v1/user/usage.csv?packId=${encodeURIComponent(packId)}&view=${view}`);

export const receiptsQuery = queryOptions({ queryKey: ['receipts'], queryFn: () => request('GET', '/v1/user/receipts', { schema: ReceiptsAnswer }) });

export const receiptQuery = (orderId: string) =>
  queryOptions({ queryKey: ['receipt', orderId], queryFn: () => request('GET', `/v1/user/receipt?orderId=${encodeURIComponent(orderId)}`, { schema: Receipt }) });

export const receiptPdf = (orderId: string) => download(`/v1/user/receipt.pdf?orderId=${encodeURIComponent(orderId)}`);
