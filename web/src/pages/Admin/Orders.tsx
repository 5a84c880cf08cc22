import { useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { OrderStatusFilter, type AdminOrder } from '@hyperdesk/contract';
import { adminOrdersQuery, refulfilOrder } from '../../api/admin';
import { ActionStatus, Badge, formatDate, formatMoney, FilterSelect, Panel, SearchForm } from './parts';
import { useAdminAction } from './useAction';
import { KeysetTable } from './KeysetTable';
import styles from './Admin.module.css';

const TONE = { paid: 'good', pending: 'warn', failed: 'bad', expired: undefined } as const;

/** Orders and payments, with the fulfilment result; re-running fulfilment converges from the provider (idempotent). */
export default function Orders() {
  const [q, setQ] = useState('');
  const [status, setStatus] = useState<OrderStatusFilter>('all');
  const result = useInfiniteQuery(adminOrdersQuery(q, status));
  const action = useAdminAction();
  const refulfil = (o: AdminOrder) =>
    action.run(() => refulfilOrder(o.id), `Order ${o.id.slice(0, 8)}: fulfilment converged from the payment provider.`);

  return (
    <Panel
      title="Orders and payments"
      hint="Re-running fulfilment reads the payment provider again; an order already delivered stays as it is."
      filters={
        <SearchForm label="Buyer, session or id" placeholder="e-mail, cs_… or order id" onSearch={setQ}>
          <FilterSelect label="Status" schema={OrderStatusFilter} value={status} labels={(s) => (s === 'all' ? 'All orders' : s)} onChange={setStatus} />
        </SearchForm>
      }
    >
      <ActionStatus message={action.message} error={action.error} />
      <KeysetTable
        result={result}
        what="orders"
        empty="No order matches these filters."
        caption="Orders"
        columns={['Order', 'Buyer', 'Status', { label: 'Amount', num: true }, 'Provider', 'Fulfilment', 'Actions']}
        row={(o) => (
          <tr key={o.id}>
            <td>
              {o.kind === 'course' ? `Course · ${o.vms} VMs × ${o.hours} h` : `${o.hours} h pack`}
              <span className={`${styles.sub} ${styles.mono}`}>{o.id}</span>
              <span className={styles.sub}>{formatDate(o.createdAt)}</span>
            </td>
            <td>{o.userEmail ?? '—'}</td>
            <td>
              <Badge tone={TONE[o.status]}>{o.status}</Badge>
              {o.paidAt ? <span className={styles.sub}>paid {formatDate(o.paidAt)}</span> : null}
            </td>
            <td className={styles.num}>{formatMoney(o.amountMinor, o.currency)}</td>
            <td>
              {o.provider}
              {o.providerSessionId ? <span className={`${styles.sub} ${styles.mono}`}>{o.providerSessionId}</span> : null}
              {o.paymentMethod ? <span className={styles.sub}>{o.paymentMethod}</span> : null}
            </td>
            <td>
              {o.fulfilledAt ? <Badge tone="good">delivered</Badge> : <Badge tone={o.status === 'paid' ? 'bad' : undefined}>not delivered</Badge>}
              {o.fulfilledAt ? <span className={styles.sub}>{formatDate(o.fulfilledAt)}</span> : null}
              {o.machineId ? <span className={`${styles.sub} ${styles.mono}`}>machine {o.machineId}</span> : null}
              {o.courseId ? <span className={`${styles.sub} ${styles.mono}`}>course {o.courseId}</span> : null}
            </td>
            <td>
              <button type="button" className={styles.small} disabled={action.pending || o.status === 'failed' || o.status === 'expired'} onClick={() => refulfil(o)}>
                Re-run fulfilment
              </button>
            </td>
          </tr>
        )}
      />
    </Panel>
  );
}
