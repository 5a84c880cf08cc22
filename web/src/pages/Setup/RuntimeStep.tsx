import { useState } from 'react';
import { NO_PACKAGES_MESSAGE } from '@hyperdesk/contract';
import { Spinner } from '../../components/Spinner';
import type { RuntimeOptions, StepProps } from './flows';
import { isConfirmed } from './flowState';
import { FieldError, Step } from './Step';
import styles from './Setup.module.css';

interface Props extends StepProps {
  runtime: RuntimeOptions;
  notes: readonly string[];
}

/** Packages for the chosen location, hours only (the price shows in the summary and on the pay button). */
export function RuntimeStep({ state, dispatch, number, runtime, notes }: Props) {
  const [error, setError] = useState(false);
  const done = isConfirmed(state, 'runtime');
  const open = state.steps[state.confirmed] === 'runtime';
  const selectedKey = state.runtime ? optionKey(state.runtime) : null;

  const confirm = () => {
    if (!state.runtime) return setError(true);
    dispatch({ type: 'confirm', step: 'runtime' });
  };

  return (
    <Step
      focusOnOpen={state.moved}
      number={number}
      title="Choose your Runtime"
      status={done ? 'done' : open ? 'open' : 'locked'}
      summary={state.runtime ? `${state.runtime.hours} hours` : null}
      onChange={() => dispatch({ type: 'change', step: 'runtime' })}
    >
      {runtime.status === 'loading' ? <Spinner label="Loading packages" /> : null}
      {runtime.status === 'error' ? <p className={styles.error} role="alert">{NO_PACKAGES_MESSAGE}</p> : null}
      {runtime.status === 'ready' ? (
        <>
          <fieldset className={styles.packages} aria-describedby={error ? 'setup-runtime-error' : undefined}>
            <legend className="sr-only">Runtime hours per month</legend>
            {runtime.options.map((o) => {
              const selected = selectedKey === optionKey(o);
              return (
                <label key={optionKey(o)} className={`${styles.pack} ${selected ? styles.cardSelected : ''}`}>
                  <input
                    type="radio"
                    name="setup-runtime"
                    className={styles.radio}
                    checked={selected}
                    onChange={() => {
                      setError(false);
                      dispatch({ type: 'runtime', value: o });
                    }}
                  />
                  <span className={styles.packHours}>{o.hours}</span>{' '}
                  <span className={styles.packUnit}>hours</span>
                </label>
              );
            })}
          </fieldset>
          {notes.map((n) => (
            <p key={n} className={styles.note}>
              {n}
            </p>
          ))}
          {error ? <FieldError id="setup-runtime-error">Please select the package</FieldError> : null}
          <div className={styles.actions}>
            <button type="button" className={styles.primary} onClick={confirm}>
              Confirm Runtime
            </button>
          </div>
        </>
      ) : null}
    </Step>
  );
}

function optionKey(o: { hours: number; packId?: string }): string {
  return o.packId ?? `h${o.hours}`;
}
