import { useState } from 'react';
import { COUNTRIES, countryById, CountryId } from '@hyperdesk/contract';
import type { StepProps } from './flowState';
import { isConfirmed } from './flowState';
import { FieldError, Step } from './Step';
import styles from './Setup.module.css';
import { CountryName } from '../../lib/Flag';

export function CountryStep({ state, dispatch, number }: StepProps) {
  const [error, setError] = useState(false);
  const done = isConfirmed(state, 'country');
  const open = state.steps[state.confirmed] === 'country';
  const country = state.country ? countryById(state.country) : undefined;

  const confirm = () => {
    if (!state.country) return setError(true);
    dispatch({ type: 'confirm', step: 'country' });
  };

  return (
    <Step
      focusOnOpen={state.moved}
      number={number}
      title="Choose Your Country"
      status={done ? 'done' : open ? 'open' : 'locked'}
      summary={country ? <CountryName country={country.id} label={country.label} /> : null}
      onChange={() => dispatch({ type: 'change', step: 'country' })}
    >
      <label className={styles.label} htmlFor="setup-country">
        Country
      </label>
      <select
        id="setup-country"
        className={styles.select}
        value={state.country ?? ''}
        aria-invalid={error || undefined}
        aria-describedby={error ? 'setup-country-error' : undefined}
        onChange={(e) => {
          const parsed = CountryId.safeParse(e.target.value);
          setError(false);
          dispatch({ type: 'country', value: parsed.success ? parsed.data : null });
        }}
      >
        <option value="">Select your country</option>
        {COUNTRIES.map((c) => (
          <option key={c.id} value={c.id}>
            {c.label}
          </option>
        ))}
      </select>
      {error ? <FieldError id="setup-country-error">This field is required</FieldError> : null}
      <div className={styles.actions}>
        <button type="button" className={styles.primary} onClick={confirm}>
          Confirm Country
        </button>
      </div>
    </Step>
  );
}
