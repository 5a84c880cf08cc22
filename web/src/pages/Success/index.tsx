import { Link, useSearchParams } from 'react-router';
import { AppLayout } from '../../components/AppLayout';
import { Spinner } from '../../components/Spinner';
import { formatMoneyIn } from '../../lib/format';
import { HelpEmail } from '../../lib/HelpEmail';
import { courseOfOrder, loadOrder } from '../../lib/order';
import { OrderSummary } from '../Setup/OrderSummary';
import { useOrderStatus } from './useOrderStatus';
import styles from './Result.module.css';

const STATUS_TEXT = { paid: 'Successful', pending: 'Processing', failed: 'Unsuccessful', expired: 'Expired' } as const;

export default function Success() {
  const [params] = useSearchParams();
  const orderId = params.get('orderId');
  const order = useOrderStatus(orderId);
  const stored = loadOrder();
  const pack = order.data?.pack;
  const loading = order.loading;
  const value = (v: string | undefined, label: string) => (v !== undefined ? v : loading ? <Spinner small label={`Loading ${label}`} /> : '—');

  return (
    <AppLayout
      title="Payment Successful!"
      sidebar={
        <OrderSummary
          title="Your Cloud Machine"
          country={pack?.region ?? stored?.country}
          platform={stored?.platform}
          alwaysSpecs
          course={courseOfOrder(stored)}
          hours={pack?.hours ?? null}
          loading={loading}
        />
      }
    >
      <section className={styles.card}>
        <span className={`${styles.icon} ${styles.ok}`} aria-hidden="true">
          <svg viewBox="0 0 24 24" width="28" height="28" focusable="false">
            <path d="M5 12.5l4.5 4.5L19 7.5" fill="none" stroke="currentColor" strokeWidth="2.6" strokeLinecap="round" strokeLinejoin="round" />
          </svg>
        </span>
        <p className={styles.lead}>Congratulations, your Cloud Machine is ready for setup!</p>
        <HelpEmail className={styles.help} />
        <Link to="/dashboard" className={styles.primary}>
          Go to Dashboard
        </Link>
      </section>
      <section className={styles.card} aria-labelledby="payment-summary">
        <h2 id="payment-summary" className={styles.h2}>
          Payment Summary
        </h2>
        <dl className={styles.rows}>
          <div className={styles.row}>
            <dt>Amount</dt>
            <dd>{value(pack ? formatMoneyIn(pack.price, pack.region) : undefined, 'amount')}</dd>
          </div>
          <div className={styles.row}>
            <dt>Payment Method</dt>
            <dd>{value(pack?.paymentMethod, 'payment method')}</dd>
          </div>
          <div className={styles.row}>
            <dt>Payment Status</dt>
            <dd className={order.data?.status === 'paid' ? styles.good : undefined}>
              {value(order.data && !loading ? STATUS_TEXT[order.data.status] : undefined, 'payment status')}
            </dd>
          </div>
        </dl>
      </section>
    </AppLayout>
  );
}
