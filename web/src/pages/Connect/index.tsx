import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useLocation } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import type { ConnectPayload } from '@hyperdesk/contract';
import { balanceQuery } from '../../api/wallet';
import { DesktopConnection, type DesktopState } from './desktop';
import { decodeConnectPayload } from './payload';
import { Toolbar } from './Toolbar';
import { BadLinkScreen, StatusScreen } from './StatusScreen';
import { ClipboardPanel } from './ClipboardPanel';
import { IdleDialog } from './IdleDialog';
import { DropOverlay, FilesPanel } from './FilesPanel';
import { useFileDrop, useTransfers } from './transfers';
import { RaiseHandButton, TakeoverNotice } from './ClassHelp';
import { useFullScreen } from './fullscreen';
import { useSlotAction } from '../../lib/useSlotAction';
import styles from './Connect.module.css';

const HOURS_REFRESH_MS = 60_000;

/** The connect tab (spec §2 `connect#{payload}`, §7): the machine's desktop in the browser. */
export default function Connect() {
  const { hash } = useLocation();
  const payload = useMemo(() => decodeConnectPayload(hash), [hash]);
  useEffect(() => {
    if (!payload) document.title = 'Connect — Hyperdesk';
  }, [payload]);
  if (!payload) {
    return (
      <main className={styles.page}>
        <div className={styles.stage}>
          <div className={styles.overlay}>
            <BadLinkScreen />
          </div>
        </div>
      </main>
    );
  }
  return <Desktop key={hash} payload={payload} />;
}

function Desktop({ payload }: { payload: ConnectPayload }) {
  const root = useRef<HTMLElement>(null);
  const screen = useRef<HTMLDivElement>(null);
  const conn = useRef<DesktopConnection | null>(null);
  const [state, setState] = useState<DesktopState | null>(null);
  const [clipboardOpen, setClipboardOpen] = useState(false);
  const [filesOpen, setFilesOpen] = useState(false);
  const toolbar = useRef<HTMLDivElement>(null);
  // A phone or tablet gets the Keyboard button (its on-screen keyboard opens only for a text field's focus).
  const [touchScreen] = useState(() => navigator.maxTouchPoints > 0);
  const [statsOpen, setStatsOpen] = useState(false);
  const balance = useQuery({ ...balanceQuery(), refetchInterval: HOURS_REFRESH_MS });
  const entry = balance.data?.find((e) => e.packId === payload.packId);
  const hoursLeft = balance.isPending ? undefined : (entry?.timeLeft ?? null);
  const slot = useSlotAction(payload.packId);

  // The remote desktop: a socket, timers and noVNC's canvas live outside React (house rule 8).
  useEffect(() => {
    if (!screen.current) return;
    const c = new DesktopConnection(payload.url, screen.current, setState);
    conn.current = c;
    c.start();
    return () => {
      c.destroy();
      conn.current = null;
    };
  }, [payload.url]);

  const phase = state?.phase ?? { kind: 'connecting' as const, attempt: 1 };
  const connected = phase.kind === 'connected';
  // Files dropped on the tab go to the desktop's ~/Uploads; the Files panel opens to show their progress.
  const files = useTransfers(payload.packId);
  const uploadDropped = files.upload;
  const onDrop = useCallback((dropped: File[]) => {
    setFilesOpen(true);
    uploadDropped(dropped);
  }, [uploadDropped]);
  const dragging = useFileDrop(connected, onDrop);
  useEffect(() => {
    if (connected) document.title = `${payload.machineName} — Hyperdesk`;
    else if (phase.kind === 'connecting' || phase.kind === 'reconnecting') document.title = 'Connecting…';
  }, [connected, phase.kind, payload.machineName]);

  // The machine's state changes what the balance says (hours, stop reason, start time): refresh on every turn.
  const refetchBalance = balance.refetch;
  useEffect(() => {
    void refetchBalance();
  }, [phase.kind, refetchBalance]);

  const focusDesktop = useCallback(() => conn.current?.focus(), []);
  const full = useFullScreen(root, toolbar, focusDesktop);

  return (
    <main ref={root} className={styles.page} data-phase={phase.kind} data-fullscreen={full.fullScreen}>
      <div ref={toolbar} className={styles.toolbarBox} data-shown={full.toolbarShown} inert={!full.toolbarShown}>
        <Toolbar
          machineName={payload.machineName}
          phase={phase}
          hoursLeft={hoursLeft}
          rttMs={state?.rttMs ?? null}
          bitsPerSecond={state?.bitsPerSecond ?? 0}
          fullScreen={full.fullScreen}
          away={!full.toolbarShown}
          clipboardOpen={clipboardOpen && connected}
          onToggleClipboard={() => setClipboardOpen((o) => !o)}
          filesOpen={filesOpen && connected}
          onToggleFiles={() => setFilesOpen((o) => !o)}
          onToggleFullScreen={full.toggle}
          onDisconnect={() => conn.current?.disconnect()}
          transport={state?.transport ?? 'webrtc'}
          onSwitchTransport={() => conn.current?.useTransport(state?.transport === 'vnc' ? 'webrtc' : 'vnc')}
          onLockPointer={() => conn.current?.lockPointer()}
          hasAudio={state?.hasAudio ?? false}
          muted={state?.muted ?? true}
          onToggleMute={() => conn.current?.setMuted(!(state?.muted ?? true))}
          statsOpen={statsOpen}
          onToggleStats={() => setStatsOpen((o) => !o)}
          quality={state?.quality ?? 'auto'}
          onQuality={(q) => conn.current?.setQuality(q)}
          extra={payload.role === 'STUDENT' ? <RaiseHandButton packId={payload.packId} /> : null}
          onShowKeyboard={touchScreen ? () => conn.current?.showKeyboard() : undefined}
        />
      </div>
      {full.fullScreen && !full.toolbarShown ? (
        // The top edge calls the toolbar back: the mouse reaching it, or a tap there (on the click, so the tap's
        // own click cannot land on a toolbar button that appears under the finger).
        <div
          className={styles.reveal}
          data-testid="toolbar-reveal"
          aria-hidden="true"
          onPointerEnter={(e) => e.pointerType === 'mouse' && full.showToolbar()}
          onClick={full.showToolbar}
        />
      ) : null}
      {full.hint ? (
        <div className={styles.fullScreenHint} role="status">
          <strong>{full.keyboardLocked ? 'Hold Esc to exit full screen' : 'Press Esc to exit full screen'}</strong>
          <span>{touchScreen ? 'Tap the top edge for the toolbar' : 'Move the pointer to the top edge for the toolbar'}</span>
        </div>
      ) : null}
      <div className={styles.stage}>
        <div ref={screen} className={styles.screen} data-testid="desktop" aria-label={`Desktop of ${payload.machineName}`} />
        {payload.role === 'STUDENT' ? <TakeoverNotice packId={payload.packId} /> : null}
        {statsOpen && state?.stats ? (
          <dl className={styles.stats} data-testid="stream-stats">
            <dt>fps</dt><dd>{state.stats.fps}</dd>
            <dt>kbit/s</dt><dd>{state.stats.kbps}</dd>
            <dt>RTT</dt><dd>{state.stats.rttMs === null ? '–' : `${state.stats.rttMs} ms`}</dd>
            <dt>loss</dt><dd>{state.stats.lossPct}%</dd>
            <dt>path</dt><dd>{state.stats.transport || '–'}</dd>
          </dl>
        ) : null}
        {clipboardOpen && connected ? (
          <ClipboardPanel
            key={state?.remoteClipboard ?? ''}
            remoteText={state?.remoteClipboard ?? ''}
            onSend={(text) => conn.current?.paste(text)}
            onClose={() => {
              setClipboardOpen(false);
              conn.current?.focus();
            }}
          />
        ) : null}
        {filesOpen && connected ? (
          <FilesPanel
            packId={payload.packId}
            transfers={files.transfers}
            onUpload={files.upload}
            onDownload={files.download}
            onClearFinished={files.clearFinished}
            onClose={() => {
              setFilesOpen(false);
              conn.current?.focus();
            }}
          />
        ) : null}
        {dragging ? <DropOverlay /> : null}
        {phase.kind !== 'connected' ? (
          <div className={styles.overlay}>
            <StatusScreen
              machineName={payload.machineName}
              role={payload.role}
              phase={phase}
              processingSince={entry?.processingSince ?? null}
              stopReason={entry?.stopReason ?? null}
              idleStopMinutes={state?.idleStopMinutes ?? null}
              onRetry={() => conn.current?.reconnect()}
              start={entry?.role === 'SINGLE' ? { run: () => slot.start(() => conn.current?.reconnect()), busy: slot.busy, failure: slot.failure } : null}
            />
          </div>
        ) : null}
      </div>
      <IdleDialog stopAt={state?.idleStopAt ?? null} reason={state?.idleReason ?? 'idle'} timeZone={state?.idleTimeZone ?? null} onStillHere={() => conn.current?.stillHere()} />
    </main>
  );
}
