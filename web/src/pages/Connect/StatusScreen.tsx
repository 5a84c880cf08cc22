import { useEffect, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { Spinner } from '../../components/Spinner';
import type { Phase } from './desktop';
import styles from './Connect.module.css';

const START_PROMISE_MS = 5 * 60_000;

export interface StatusScreenProps {
  machineName: string;
  /** The entry's role (spec §7 payload): students neither start machines nor buy hours. */
  role: string;
  phase: Exclude<Phase, { kind: 'connected' }>;
  /** From the balance entry: when the current start began, and why the machine last stopped. */
  processingSince: string | null;
  stopReason: string | null;
  idleStopMinutes: number | null;
  onRetry(): void;
  /** A single user's own machine can be started from the tab (spec §6: Start Machine when offline); null otherwise. */
  start: StartAgain | null;
}

export interface StartAgain {
  run(): void;
  busy: boolean;
  /** Why the last start could not begin (its FAILED answer). */
  failure: string | null;
}

/** Starts the machine; the tab then shows it starting and connects by itself once it is ready. */
function StartButton({ start }: { start: StartAgain }) {
  return (
    <button type="button" className={styles.primary} onClick={start.run} disabled={start.busy}>
      {start.busy ? 'Starting…' : 'Start Machine'}
    </button>
  );
}

/** Why the last start could not begin, above the buttons (not a flex item beside them). */
function StartFailure({ start }: { start: StartAgain | null }) {
  return start?.failure ? (
    <p className={styles.reason} role="alert">
      {start.failure}
    </p>
  ) : null;
}

function Screen({ title, children, busy = false, tone = 'info' }: { title: string; children?: ReactNode; busy?: boolean; tone?: 'info' | 'warn' }) {
  return (
    <section className={styles.screenCard} data-tone={tone} aria-live="polite" aria-busy={busy}>
      {busy ? <Spinner label={title} /> : null}
      <h2 className={styles.screenTitle}>{title}</h2>
      {children}
    </section>
  );
}

const Dashboard = () => (
  <Link className={styles.secondary} to="/dashboard">
    Go to Dashboard
  </Link>
);

/** The 5-minute start promise as a countdown in 60-second steps (spec §4, §9). */
function StartCountdown({ since }: { since: string | null }) {
  const [seenAt] = useState(() => Date.now());
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const began = since ? new Date(since).getTime() : seenAt;
  const minutes = Math.ceil((began + START_PROMISE_MS - now) / 60_000);
  return (
    <p className={styles.countdown} data-testid="countdown">
      {minutes > 0 ? `Ready in about ${minutes} minute${minutes === 1 ? '' : 's'}.` : 'Almost ready…'}
    </p>
  );
}

/** Every state of the connect tab other than a live desktop, each with a way forward. */
export function StatusScreen({ machineName, role, phase, processingSince, stopReason, idleStopMinutes, onRetry, start }: StatusScreenProps) {
  const student = role === 'STUDENT';
  const retry = (label = 'Try again') => (
    <button type="button" className={styles.primary} onClick={onRetry}>
      {label}
    </button>
  );
  switch (phase.kind) {
    case 'connecting':
      return <Screen title={`Connecting to ${machineName}…`} busy />;
    case 'reconnecting':
      return (
        <Screen title="Connection lost" busy>
          <p>Reconnecting in {phase.inSeconds} s (attempt {phase.attempt})…</p>
          <div className={styles.buttons}>{retry('Reconnect now')}</div>
        </Screen>
      );
    case 'starting':
      return (
        <Screen title="Your machine is starting" busy>
          <StartCountdown since={processingSince} />
          <p>This tab connects by itself as soon as it is ready.</p>
        </Screen>
      );
    case 'offline':
      return (
        <Screen title="Your machine is offline" tone="warn">
          {stopReason ? <p className={styles.reason}>{stopReason}</p> : null}
          {student ? (
            <p>Please wait for your Instructor to start the machine, then connect again.</p>
          ) : start ? (
            <p>Start it here; this tab connects by itself as soon as it is ready.</p>
          ) : (
            <p>Start it from your dashboard, then connect again.</p>
          )}
          <StartFailure start={start} />
          <div className={styles.buttons}>
            {start ? <StartButton start={start} /> : retry()}
            <Dashboard />
          </div>
        </Screen>
      );
    case 'hours-exhausted':
      return (
        <Screen title="You're out of hours" tone="warn">
          <p className={styles.reason}>{phase.reason ?? stopReason ?? 'This machine has no runtime hours left.'}</p>
          {student ? (
            // Students do not buy hours (issue 22): their instructor does.
            <p>Please ask your Instructor for more hours.</p>
          ) : (
            <p>You can top up anytime in case you run out.</p>
          )}
          <div className={styles.buttons}>
            {student ? null : (
              <Link className={styles.primary} to="/setup">
                Top up hours
              </Link>
            )}
            <Dashboard />
          </div>
        </Screen>
      );
    case 'refused':
      return (
        <Screen title={phase.title ?? "Can't connect to this machine"} tone="warn">
          <p>{phase.message}</p>
          <div className={styles.buttons}>
            <Dashboard />
          </div>
        </Screen>
      );
    case 'stopped':
      return (
        <Screen title="This machine was stopped" tone="warn">
          <p className={styles.reason}>{phase.reason}</p>
          {/* Students do not start course machines: their instructor does. */}
          <p>
            Your files are kept.{' '}
            {student ? 'Ask your instructor to start it.' : start ? 'Start it again here or from your dashboard.' : 'Start it again from your dashboard.'}
          </p>
          <StartFailure start={start} />
          <div className={styles.buttons}>
            {start ? (
              <>
                <StartButton start={start} />
                <Dashboard />
              </>
            ) : (
              <>
                <Dashboard />
                {retry('Reconnect')}
              </>
            )}
          </div>
        </Screen>
      );
    case 'disconnected':
      return (
        <Screen title="You're disconnected">
          <p>
            Your machine keeps running and using hours
            {idleStopMinutes ? `; it stops by itself after ${idleStopMinutes} minutes without use` : ''}. Stop it from
            your dashboard when you're done.
          </p>
          <div className={styles.buttons}>
            {retry('Reconnect')}
            <Dashboard />
          </div>
        </Screen>
      );
    case 'elsewhere':
      return (
        <Screen title="Your desktop is open somewhere else">
          <p>It shows in one tab at a time, and another tab or computer has just opened it. Nothing was lost: it keeps running there.</p>
          <div className={styles.buttons}>
            {retry('Use here')}
            <Dashboard />
          </div>
        </Screen>
      );
    case 'failed':
      return (
        <Screen title="Connection failed" tone="warn">
          <p>{phase.message}</p>
          <div className={styles.buttons}>
            {retry()}
            <Dashboard />
          </div>
        </Screen>
      );
  }
}

/** A fragment that is not a connect payload: nothing to connect to. */
export function BadLinkScreen() {
  return (
    <Screen title="This connection link is not valid" tone="warn">
      <p>Open your machine with the Connect button on your dashboard.</p>
      <div className={styles.buttons}>
        <Dashboard />
      </div>
    </Screen>
  );
}
