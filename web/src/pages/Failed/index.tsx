import { Link } from 'react-router';
import { AppLayout } from '../../components/AppLayout';
import { HelpEmail } from '../../lib/HelpEmail';
import { courseOfOrder, loadOrder, retryUrlOf } from '../../lib/order';
import { OrderSummary } from '../Setup/OrderSummary';
import styles from '../Success/Result.module.css';

export default function Failed() {
  const order = loadOrder();
  const retryUrl = retryUrlOf(order);

  return (
    <AppLayout
      title="Payment Unsuccessful"
      sidebar={
        <OrderSummary
          title="Your Cloud Machine"
          country={order?.country}
          platform={order?.platform}
          alwaysSpecs={Boolean(order)}
          course={courseOfOrder(order)}
          hours={order?.hours ?? null}
          total={order?.amount ?? null}
          empty="No order details were found in this browser."
        />
      }
    >
      <section className={styles.card}>
        <span className={`${styles.icon} ${styles.bad}`} aria-hidden="true">
          <svg viewBox="0 0 24 24" width="26" height="26" focusable="false">
            <path d="M7 7l10 10M17 7L7 17" fill="none" stroke="currentColor" strokeWidth="2.6" strokeLinecap="round" />
          </svg>
        </span>
        <p className={styles.lead}>Oops, something went wrong and your payment didn't go through. Please try again.</p>
        <HelpEmail className={styles.help} />
        {retryUrl ? (
          <button type="button" className={styles.primary} onClick={() => window.location.assign(retryUrl)}>
            Retry Payment
          </button>
        ) : (
          <Link to="/setup" className={styles.primary}>
            Retry Payment
          </Link>
        )}
      </section>
    </AppLayout>
  );
}
