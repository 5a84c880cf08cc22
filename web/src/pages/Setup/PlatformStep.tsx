import { useState } from 'react';
import { PLATFORMS, type PlatformOption } from '@hyperdesk/contract';
import type { StepProps } from './flowState';
import { isConfirmed } from './flowState';
import { FieldError, Step } from './Step';
import styles from './Setup.module.css';

interface Props extends StepProps {
  /** Business users may pick platforms marked disabled (spec §2). */
  disabledSelectable: boolean;
}

export function specRows(p: Pick<PlatformOption, 'cpu' | 'cpu_cores' | 'ram' | 'gpu' | 'gpu_ram'>): Array<[string, string]> {
  return [
    ['CPU', p.cpu],
    ['CPU Cores', String(p.cpu_cores)],
    ['RAM', p.ram],
    ['GPU', p.gpu],
    ['GPU RAM', p.gpu_ram],
  ];
}

export function PlatformStep({ state, dispatch, number, disabledSelectable }: Props) {
  const [error, setError] = useState(false);
  const done = isConfirmed(state, 'platform');
  const open = state.steps[state.confirmed] === 'platform';

  const confirm = () => {
    if (!state.platform) return setError(true);
    dispatch({ type: 'confirm', step: 'platform' });
  };

  return (
    <Step
      focusOnOpen={state.moved}
      number={number}
      title="Choose your Development Platform"
      status={done ? 'done' : open ? 'open' : 'locked'}
      summary={state.platform}
      onChange={() => dispatch({ type: 'change', step: 'platform' })}
    >
      <fieldset className={styles.cards} aria-describedby={error ? 'setup-platform-error' : undefined}>
        <legend className="sr-only">Development platform</legend>
        {PLATFORMS.map((p) => {
          const unavailable = p.disabled && !disabledSelectable;
          const selected = state.platform === p.name;
          return (
            <label key={p.name} className={`${styles.card} ${selected ? styles.cardSelected : ''} ${unavailable ? styles.cardDisabled : ''}`}>
              <input
                type="radio"
                name="setup-platform"
                className={styles.radio}
                value={p.name}
                checked={selected}
                disabled={unavailable}
                onChange={() => {
                  setError(false);
                  dispatch({ type: 'platform', value: p.name });
                }}
              />
              <span className={styles.cardTitle}>
                {p.name}
                {unavailable ? <span className={styles.soon}>Not available</span> : null}
              </span>
              <span className={styles.specs}>
                {specRows(p).map(([k, v]) => (
                  <span key={k} className={styles.specRow}>
                    <span className={styles.specKey}>{k}</span>
                    <span className={styles.specVal}>{v}</span>
                  </span>
                ))}
              </span>
            </label>
          );
        })}
      </fieldset>
      {error ? <FieldError id="setup-platform-error">Please select the platform</FieldError> : null}
      <div className={styles.actions}>
        <button type="button" className={styles.primary} onClick={confirm}>
          Confirm Platform
        </button>
      </div>
    </Step>
  );
}
