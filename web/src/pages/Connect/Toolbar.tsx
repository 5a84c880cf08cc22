import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { formatHours } from '../../lib/format';
import type { Phase, Transport } from './desktop';
import type { Quality } from './webrtc';
import styles from './Connect.module.css';

export interface ToolbarProps {
  machineName: string;
  phase: Phase;
  /** Hours left on the machine; undefined while loading, null when unknown. */
  hoursLeft: number | null | undefined;
  rttMs: number | null;
  bitsPerSecond: number;
  fullScreen: boolean;
  clipboardOpen: boolean;
  onToggleClipboard(): void;
  filesOpen: boolean;
  onToggleFiles(): void;
  onToggleFullScreen(): void;
  onDisconnect(): void;
  transport: Transport;
  onSwitchTransport(): void;
  onLockPointer(): void;
  hasAudio: boolean;
  muted: boolean;
  onToggleMute(): void;
  statsOpen: boolean;
  onToggleStats(): void;
  quality: Quality;
  onQuality(q: Quality): void;
  /** Controls of the student's class (Raise hand), first in the row. */
  extra?: ReactNode;
  /** In full screen, the toolbar slid away: More's panel closes with it. */
  away?: boolean;
  /** On touch screens: opens the on-screen keyboard for the desktop (kept in the row, never under More). */
  onShowKeyboard?: () => void;
}

const QUALITY_LABELS: [Quality, string][] = [
  ['auto', 'Auto'],
  ['high', 'High'],
  ['medium', 'Medium'],
  ['low', 'Low'],
];

/** Round trips past 100 ms are noticeable when typing, past 250 ms sluggish. (The rate shown beside is what the
 *  desktop currently sends, not what the link could carry, so it does not rate the link.) */
export function qualityOf(rttMs: number | null): 'good' | 'fair' | 'poor' | 'unknown' {
  if (rttMs === null) return 'unknown';
  if (rttMs > 250) return 'poor';
  if (rttMs > 100) return 'fair';
  return 'good';
}

export function formatRate(bitsPerSecond: number): string {
  if (bitsPerSecond >= 1_000_000) return `${(bitsPerSecond / 1_000_000).toFixed(1)} Mbps`;
  return `${Math.round(bitsPerSecond / 1000)} kbps`;
}

const statusText: Partial<Record<Phase['kind'], string>> = {
  connecting: 'Connecting…',
  connected: 'Connected',
  reconnecting: 'Reconnecting…',
  starting: 'Starting…',
};

/**
 * One row at any width: on a narrow window (CSS breakpoint) the controls fold into a panel under "More"; a long
 * machine or course name is cut with an ellipsis rather than pushing the controls to a second row.
 */
export function Toolbar(p: ToolbarProps) {
  const connected = p.phase.kind === 'connected';
  const quality = qualityOf(p.rttMs);
  const [moreOpen, setMoreOpen] = useState(false);
  // Going in or out of full screen, or the toolbar sliding away, closes More's panel: it would cover the desktop.
  const layout = `${p.fullScreen}/${p.away ?? false}`;
  const [lastLayout, setLastLayout] = useState(layout);
  if (layout !== lastLayout) {
    setLastLayout(layout);
    setMoreOpen(false);
  }
  const bar = useRef<HTMLElement>(null);
  const actionsId = useId();
  // The panel closes on Escape and on a click anywhere outside the toolbar (document listeners: house rule 8).
  useEffect(() => {
    if (!moreOpen) return;
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setMoreOpen(false);
    const onDown = (e: PointerEvent) => !bar.current?.contains(e.target as Node) && setMoreOpen(false);
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onDown);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onDown);
    };
  }, [moreOpen]);
  return (
    <header ref={bar} className={styles.toolbar}>
      <div className={styles.identity}>
        <h1 className={styles.name} title={p.machineName}>{p.machineName}</h1>
        <span className={styles.status} data-phase={p.phase.kind}>{statusText[p.phase.kind] ?? 'Not connected'}</span>
      </div>
      <div className={styles.meters}>
        <span className={styles.hours} data-testid="hours-left">
          {p.hoursLeft === undefined ? 'Loading hours…' : p.hoursLeft === null ? '' : `${formatHours(p.hoursLeft)} hours left`}
        </span>
        {connected ? (
          <span className={styles.quality} data-quality={quality} data-testid="quality" aria-label={`Connection quality: ${quality}`}>
            <span className={styles.dot} aria-hidden="true" />
            {p.rttMs === null ? 'Measuring…' : `${p.rttMs} ms · ${formatRate(p.bitsPerSecond)}`}
          </span>
        ) : null}
      </div>
      {p.onShowKeyboard ? (
        <button type="button" className={`${styles.tool} ${styles.keyboard}`} onClick={p.onShowKeyboard} disabled={!connected} title="Type on the desktop with this device's keyboard">
          <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
            <rect x="2.5" y="6" width="19" height="12" rx="2" fill="none" stroke="currentColor" strokeWidth="1.6" />
            <path d="M6 9.5h1.5M9.5 9.5H11M13 9.5h1.5M16.5 9.5H18M6 12.5h1.5M9.5 12.5H11M13 12.5h1.5M16.5 12.5H18M8 15h8" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" />
          </svg>
          <span className={styles.keyboardLabel}>Keyboard</span>
        </button>
      ) : null}
      <button type="button" className={`${styles.tool} ${styles.more}`} aria-expanded={moreOpen} aria-controls={actionsId} onClick={() => setMoreOpen((o) => !o)}>
        More
      </button>
      <div id={actionsId} className={styles.actions} data-open={moreOpen}>
        {p.extra}
        <span className={styles.transport} data-testid="transport" title="How the desktop reaches you">
          {p.transport === 'webrtc' ? 'WebRTC' : 'VNC'}
        </span>
        <button type="button" className={styles.tool} onClick={p.onSwitchTransport} data-testid="switch-transport">
          {p.transport === 'webrtc' ? 'Use VNC' : 'Use WebRTC'}
        </button>
        {p.transport === 'webrtc' ? (
          <>
            <button type="button" className={styles.tool} onClick={p.onLockPointer} disabled={!connected} title="Capture the mouse for games (Esc releases it)">
              Lock mouse
            </button>
            <label className={styles.qualityPick} title="Auto fits the picture to your link; High, Medium and Low cap it at about 3, 1 and 0.5 Mbit/s">
              <span className={styles.qualityLabel}>Quality</span>
              <select className={styles.tool} value={p.quality} onChange={(e) => p.onQuality(e.target.value as Quality)} data-testid="video-quality">
                {QUALITY_LABELS.map(([q, label]) => (
                  <option key={q} value={q}>
                    {label}
                  </option>
                ))}
              </select>
            </label>
            <button type="button" className={styles.tool} aria-pressed={p.statsOpen} onClick={p.onToggleStats}>
              Stats
            </button>
            {p.hasAudio ? (
              <button type="button" className={styles.tool} aria-pressed={!p.muted} onClick={p.onToggleMute}>
                {p.muted ? 'Unmute' : 'Mute'}
              </button>
            ) : null}
          </>
        ) : null}
        <button type="button" className={styles.tool} aria-pressed={p.filesOpen} onClick={p.onToggleFiles} disabled={!connected}>
          Files
        </button>
        <button type="button" className={styles.tool} aria-pressed={p.clipboardOpen} onClick={p.onToggleClipboard} disabled={!connected}>
          Clipboard
        </button>
        <button type="button" className={styles.tool} onClick={p.onToggleFullScreen}>
          {p.fullScreen ? 'Exit full screen' : 'Full screen'}
        </button>
        <button type="button" className={`${styles.tool} ${styles.danger}`} onClick={p.onDisconnect} disabled={!connected && p.phase.kind !== 'reconnecting'}>
          Disconnect
        </button>
      </div>
    </header>
  );
}
