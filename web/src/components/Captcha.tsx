import { useEffect, useRef, useState } from 'react';
import type {} from 'altcha/types/react';
import { Spinner } from './Spinner';
import styles from './Captcha.module.css';

let loading: Promise<void> | null = null;

/**
 * Loads the ALTCHA widget on first use only (it stays out of the landing bundle). The `external` build keeps its
 * styles in a stylesheet and its proof-of-work worker in a file served from our own origin, which the CSP
 * (script-src 'self', no inline scripts) allows.
 */
function loadAltcha(): Promise<void> {
  loading ??= (async () => {
    const [, , worker] = await Promise.all([
      import('altcha/external'),
      import('altcha/altcha.css'),
      import('altcha/workers/sha?worker'),
    ]);
    const ShaWorker = worker.default;
    for (const algorithm of ['SHA-256', 'SHA-384', 'SHA-512']) {
      globalThis.$altcha.algorithms.set(algorithm, () => new ShaWorker());
    }
  })().catch((err: unknown) => {
    loading = null;
    throw err;
  });
  return loading;
}

interface StateDetail {
  state: string;
  payload: string | null;
}

/**
 * Proof-of-work captcha ("I'm not a robot" checkbox). Reports the solution payload once verified and null whenever
 * it is not (expired, reset, error). Remount it with a new `key` to ask for a fresh solution, since each one is
 * accepted by the server only once.
 */
export function Captcha({ onChange }: { onChange(payload: string | null): void }) {
  const [status, setStatus] = useState<'loading' | 'ready' | 'failed'>('loading');
  const widget = useRef<HTMLElement>(null);
  const report = useRef(onChange);
  useEffect(() => {
    report.current = onChange;
  }, [onChange]);

  useEffect(() => {
    let live = true;
    loadAltcha().then(
      () => live && setStatus('ready'),
      () => live && setStatus('failed'),
    );
    return () => {
      live = false;
    };
  }, []);

  useEffect(() => {
    const el = widget.current;
    if (status !== 'ready' || !el) return;
    const onState = (e: Event) => {
      const { state, payload } = (e as CustomEvent<StateDetail>).detail;
      report.current(state === 'verified' && payload ? payload : null);
    };
    el.addEventListener('statechange', onState);
    return () => el.removeEventListener('statechange', onState);
  }, [status]);

  if (status === 'failed') {
    return (
      <p className={styles.failed} role="alert">
        The verification could not be loaded. Please check your connection and reload the page.
      </p>
    );
  }
  if (status === 'loading') {
    return (
      <div className={styles.placeholder}>
        <Spinner small label="Loading verification" /> <span>Loading verification…</span>
      </div>
    );
  }
  return (
    <div className={styles.wrap}>
      <altcha-widget ref={widget} challenge="/v1/captcha/challenge" name="captcha" />
    </div>
  );
}
