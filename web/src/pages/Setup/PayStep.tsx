import { useState } from 'react';
import { countryById } from '@hyperdesk/contract';
import { Spinner } from '../../components/Spinner';
import { formatMoney } from '../../lib/format';
import { saveOrder } from '../../lib/order';
import type { SetupFlow, StepProps } from './flows';
import { courseSummary } from './courseDates';
import { amountOf } from './flowState';
import { Step } from './Step';
import styles from './Setup.module.css';

interface Props extends StepProps {
  flow: SetupFlow;
}

/** Last step: keeps the order locally, asks the server for a checkout URL and goes there (spec §4 Payment). */
export function PayStep({ state, number, flow }: Props) {
  const [paying, setPaying] = useState(false);
  const open = state.steps[state.confirmed] === 'pay';
  const amount = amountOf(state);
  const symbol = state.country ? (countryById(state.country)?.symbol ?? '') : '';

  const pay = async () => {
    // Payment proceeds only when country, platform and hours are set (spec §5).
    if (!state.country || !state.platform || !state.runtime || amount === null || paying) return;
    setPaying(true);
    try {
      const url = await flow.checkout(state);
      if (!url) return setPaying(false);
      saveOrder({
        country: state.country,
        platform: state.platform,
        hours: state.runtime.hours,
        amount,
        payment_url: url,
        ...(state.course ? courseSummary(state.course, state.country) : {}),
      });
      window.location.assign(url);
    } catch {
      // Spec §8: a failed payment call shows nothing; the button comes back.
      setPaying(false);
    }
  };

  return (
    <Step number={number} title="Pay and initiate setup" status={open ? 'open' : 'locked'} focusOnOpen={state.moved}>
      <p className={styles.payText}>
        Your config looks great! Complete your payment and we'll have it up and running for you within 5 mins.
      </p>
      <div className={styles.actions}>
        {paying ? (
          <span className={styles.payBusy}>
            <Spinner label="Redirecting to payment" />
          </span>
        ) : (
          <button type="button" className={`${styles.primary} ${styles.pay}`} onClick={() => void pay()} disabled={amount === null}>
            Pay {formatMoney(amount ?? 0, symbol)} and get started
          </button>
        )}
      </div>
    </Step>
  );
}
