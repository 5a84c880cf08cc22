import { useEffect, useRef, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { WallInputEvent, WallSeat } from '@hyperdesk/contract';
import { sendInput, setTakeover } from '../../api/wall';
import { keysymOf } from '../Connect/keysym';
import dash from '../Dashboard/Dashboard.module.css';
import styles from './Wall.module.css';
import { wheelNotches } from '../Connect/wheel';

interface Props {
  seat: WallSeat;
  picture: string | undefined;
  ended: boolean;
  onBack(): void;
  onChanged(): void;
}

const FLUSH_MS = 40;
/** RFB's button mask from the browser's buttons (left 1, middle 2, right 4). */
const maskOf = (buttons: number) => (buttons & 1) | ((buttons & 4) >> 1) | ((buttons & 2) << 1);

/**
 * One student's desktop, live and view only; Take over lends the instructor its keyboard and mouse (the server
 * refuses input unless the take-over is on) until Give back, leaving the page or closing the tab.
 */
export function WatchView({ seat, picture, ended, onBack, onChanged }: Props) {
  const [controlling, setControlling] = useState(seat.takenOver);
  const [inputError, setInputError] = useState<string | null>(null);
  const surface = useRef<HTMLDivElement>(null);
  const who = seat.student?.name || seat.student?.email || 'Free seat';
  const toggle = useMutation({
    mutationFn: (on: boolean) => setTakeover(seat.machineId, on),
    onSuccess: (_r, on) => {
      setControlling(on);
      setInputError(null);
      onChanged();
      if (on) surface.current?.focus();
    },
  });

  // Keyboard and mouse of the picture, batched every 40 ms, one batch in flight at a time (house rule 8: events).
  useEffect(() => {
    const el = surface.current;
    if (!el || !controlling) return;
    const queue: WallInputEvent[] = [];
    let sending = false;
    const flush = async () => {
      if (sending || !queue.length) return;
      sending = true;
      const events = queue.splice(0, 200);
      try {
        await sendInput(seat.machineId, events);
      } catch (err) {
        setInputError((err as Error).message);
      } finally {
        sending = false;
      }
    };
    const timer = setInterval(() => void flush(), FLUSH_MS);
    const img = () => el.querySelector('img');
    const pointer = (e: PointerEvent) => {
      // Captured while a button is down: a drag released off the picture still lets go of the button on the desktop.
      if (e.type === 'pointerdown') el.setPointerCapture?.(e.pointerId);
      const r = img()?.getBoundingClientRect();
      if (!r || !r.width || !r.height) return;
      const x = Math.min(1, Math.max(0, (e.clientX - r.left) / r.width));
      const y = Math.min(1, Math.max(0, (e.clientY - r.top) / r.height));
      const last = queue.at(-1);
      const ev: WallInputEvent = { t: 'p', x, y, buttons: maskOf(e.buttons) };
      if (e.type === 'pointermove' && last?.t === 'p' && last.buttons === ev.buttons) queue[queue.length - 1] = ev;
      else queue.push(ev);
    };
    const notches = wheelNotches(); // a trackpad's small movements add up to notches, as in the Connect tab
    const wheel = (e: WheelEvent) => {
      e.preventDefault();
      const r = img()?.getBoundingClientRect();
      const dy = notches(e)?.dy;
      if (!r || !dy) return;
      const x = Math.min(1, Math.max(0, (e.clientX - r.left) / r.width));
      const y = Math.min(1, Math.max(0, (e.clientY - r.top) / r.height));
      const bit = dy < 0 ? 8 : 16;
      queue.push({ t: 'p', x, y, buttons: bit }, { t: 'p', x, y, buttons: 0 });
    };
    const key = (e: KeyboardEvent) => {
      const keysym = keysymOf(e);
      if (keysym === null) return;
      e.preventDefault();
      queue.push({ t: 'k', down: e.type === 'keydown', keysym });
    };
    const noMenu = (e: Event) => e.preventDefault();
    el.addEventListener('pointermove', pointer);
    el.addEventListener('pointerdown', pointer);
    el.addEventListener('pointerup', pointer);
    el.addEventListener('wheel', wheel, { passive: false });
    el.addEventListener('keydown', key);
    el.addEventListener('keyup', key);
    el.addEventListener('contextmenu', noMenu);
    return () => {
      clearInterval(timer);
      void flush();
      el.removeEventListener('pointermove', pointer);
      el.removeEventListener('pointerdown', pointer);
      el.removeEventListener('pointerup', pointer);
      el.removeEventListener('wheel', wheel);
      el.removeEventListener('keydown', key);
      el.removeEventListener('keyup', key);
      el.removeEventListener('contextmenu', noMenu);
    };
  }, [controlling, seat.machineId]);

  return (
    <section className={styles.watch} aria-label={`Desktop of ${who}`}>
      <div className={styles.watchBar}>
        <button type="button" className={dash.secondary} onClick={onBack}>
          ← Back to the wall
        </button>
        <h2 className={styles.watchTitle}>
          {who} <span className={styles.machineName}>{seat.machineName}</span>
        </h2>
        <span className={styles.mode} data-controlling={controlling}>{controlling ? 'You control this desktop' : 'View only'}</span>
        <button type="button" className={controlling ? dash.secondary : dash.primary} disabled={toggle.isPending || ended} onClick={() => toggle.mutate(!controlling)}>
          {controlling ? 'Give back control' : 'Take over'}
        </button>
      </div>
      {toggle.error ? <p className={styles.error} role="alert">{toggle.error.message}</p> : null}
      {inputError ? <p className={styles.error} role="alert">{inputError}</p> : null}
      {ended ? <p className={styles.error} role="status">This machine is not running any more.</p> : null}
      <div ref={surface} className={styles.surface} tabIndex={controlling ? 0 : -1} data-controlling={controlling} data-testid="watch-surface">
        {picture ? <img className={styles.big} src={picture} alt={`Live desktop of ${who}`} draggable={false} data-testid="watch-picture" /> : <span className={styles.placeholder}>Connecting to the desktop…</span>}
      </div>
      <p className={styles.hint}>
        {controlling ? `Your keyboard and mouse go to ${who}'s desktop; ${who} is told you are controlling it.` : 'Only you see this. Take over to use the keyboard and mouse; the student is told.'}
      </p>
    </section>
  );
}
