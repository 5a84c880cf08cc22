import { useEffect, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import * as Tooltip from '@radix-ui/react-tooltip';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { INSTRUCTOR_STATIC_CONFIG } from '@hyperdesk/contract';
import { startPack, stopPack } from '../../api/courses';
import { balanceKey, balanceQuery } from '../../api/wallet';
import { formatDate, formatDateRange, formatHours } from '../../lib/format';
import { MachineCard } from './MachineCard';
import type { MachineRowProps } from './rows';
import { ConfirmDialog } from './ConfirmDialog';
import { SeatList } from './SeatList';
import { UsageDialog } from './UsageDialog';
import { StudentList } from './StudentList';
import { NextClass } from './NextClass';
import { Timetable } from './Timetable';
import dash from './Dashboard.module.css';
import styles from './Course.module.css';

export const START_FAILED = 'The machines could not be started. Please try again later.';
export const COURSE_ENDED = 'The course has ended.';
export const NO_HOURS = "This course's machines have no hours left.";
export const ALL_RUNNING = 'All machines of this course are running.';

/** Who sits at which machine changes as students connect and leave: re-read it while the course's machines run. */
export const SEAT_POLL_MS = 15_000;

/** setTimeout's longest wait; a later course start is re-checked after it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Spec §3: the static configuration instructors see instead of per-entry values. */
const STATIC_CONFIG_ROWS: Array<[string, string]> = [
  ['Platform', INSTRUCTOR_STATIC_CONFIG.platform],
  ['CPU', INSTRUCTOR_STATIC_CONFIG.cpu],
  ['CPU Cores', String(INSTRUCTOR_STATIC_CONFIG.cores)],
  ['RAM', INSTRUCTOR_STATIC_CONFIG.ram],
  ['GPU', INSTRUCTOR_STATIC_CONFIG.gpu],
  ['GPU RAM', INSTRUCTOR_STATIC_CONFIG.gpu_ram],
];

/** Re-renders when `at` (epoch ms) passes, so Start All enables itself at the course start. */
function useReached(at: number): boolean {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!(at > now) || !Number.isFinite(at)) return;
    const t = setTimeout(() => setNow(Date.now()), Math.min(at - now + 50, MAX_TIMER_MS));
    return () => clearTimeout(t);
  }, [at, now]);
  return now >= at;
}

/** Start All and Stop All of one course; buttons stay disabled until the call and the refresh after it are done. */
function usePackActions(packId: string) {
  const qc = useQueryClient();
  const settle = () => qc.invalidateQueries({ queryKey: balanceKey });
  const start = useMutation({ mutationFn: () => startPack(packId), onSettled: settle });
  const stop = useMutation({ mutationFn: () => stopPack(packId), onSettled: settle });
  return {
    busy: start.isPending || stop.isPending,
    failure: start.data === 'FAILED' ? START_FAILED : null,
    startAll: () => {
      stop.reset();
      start.mutate();
    },
    stopAll: () => {
      start.reset();
      stop.mutate();
    },
  };
}

/** A button that, when disabled for a reason, stays focusable and explains itself in a tooltip. */
function ExplainedButton({ reason, className, onClick, disabled, children }: {
  reason: string | null;
  className?: string;
  onClick(): void;
  disabled: boolean;
  children: ReactNode;
}) {
  if (!reason) {
    return (
      <button type="button" className={className} onClick={onClick} disabled={disabled}>
        {children}
      </button>
    );
  }
  return (
    <Tooltip.Provider delayDuration={150}>
      <Tooltip.Root>
        <Tooltip.Trigger asChild>
          <button type="button" className={className} aria-disabled="true">
            {children}
          </button>
        </Tooltip.Trigger>
        <Tooltip.Portal>
          <Tooltip.Content className={dash.tooltip} sideOffset={6}>
            {reason}
            <Tooltip.Arrow className={dash.tooltipArrow} />
          </Tooltip.Content>
        </Tooltip.Portal>
      </Tooltip.Root>
    </Tooltip.Provider>
  );
}

/**
 * An instructor's course (spec §6): Start All (disabled before the course start date) and Stop All, the course's
 * dates and runtime, the static machine configuration, the student list upload and who uses which machine.
 */
export function InstructorRow({ entry }: MachineRowProps) {
  const { busy, failure, startAll, stopAll } = usePackActions(entry.packId);
  useQuery({ ...balanceQuery(), refetchInterval: entry.instanceStatus === 'online' ? SEAT_POLL_MS : false, notifyOnChangeProps: [] });
  const startAt = entry.startDate ? Date.parse(entry.startDate) : 0;
  const endAt = entry.endDate ? Date.parse(entry.endDate) : Infinity;
  const started = useReached(startAt);
  const ended = useReached(endAt);
  const seats = entry.seats ?? [];
  const nothingToStart = seats.length > 0 && seats.every((s) => s.instanceStatus !== 'offline');
  // Stop All ends the sessions of everyone sitting at a machine: with students connected it asks first (issue 22).
  const connected = seats.filter((s) => s.student).length;
  const [confirmStop, setConfirmStop] = useState(false);
  const [usageOpen, setUsageOpen] = useState(false);

  let startReason: string | null = null;
  if (!started) startReason = `The course starts on ${formatDate(startAt, entry.region)}. Start All is available from then.`;
  else if (ended) startReason = COURSE_ENDED;
  else if (entry.timeLeft <= 0) startReason = NO_HOURS;
  else if (nothingToStart) startReason = ALL_RUNNING;

  const actions = (
    <>
      <ExplainedButton reason={startReason} className={dash.primary} onClick={startAll} disabled={busy}>
        Start All
      </ExplainedButton>
      <button
        type="button"
        className={dash.secondary}
        onClick={() => (connected > 0 ? setConfirmStop(true) : stopAll())}
        disabled={busy || entry.instanceStatus === 'offline'}
      >
        Stop All
      </button>
      <Link to={`/wall/${entry.packId}`} className={dash.secondary}>
        Watch students
      </Link>
      <ConfirmDialog
        open={confirmStop}
        onOpenChange={setConfirmStop}
        title="Stop all machines?"
        description={`${connected === 1 ? '1 student is' : `${connected} students are`} connected now. Stopping ends their sessions; anything they have not saved is lost.`}
        confirmLabel="Stop All"
        onConfirm={stopAll}
      />
    </>
  );

  const details: Array<[string, string]> = [
    ['Course Dates', entry.startDate && entry.endDate ? formatDateRange(entry.startDate, entry.endDate, entry.region) : '—'],
    ['Concurrent Students', String(entry.vms)],
    ['Runtime', `${formatHours(entry.totalHours)} hours per machine`],
  ];

  return (
    <MachineCard
      entry={entry}
      actions={actions}
      failure={failure}
      links={
        <button type="button" className={dash.textLink} onClick={() => setUsageOpen(true)}>
          Usage history
        </button>
      }
    >
      <UsageDialog packId={entry.packId} machineName={entry.machineName} course open={usageOpen} onOpenChange={setUsageOpen} />
      <NextClass packId={entry.packId} region={entry.region} />
      <div className={styles.columns}>
        <section className={styles.block} aria-label="Course details">
          <h3 className={styles.blockTitle}>Course</h3>
          <Rows rows={details} />
        </section>
        <section className={styles.block} aria-label="Machine configuration">
          <h3 className={styles.blockTitle}>Configuration of each machine</h3>
          <Rows rows={STATIC_CONFIG_ROWS} />
        </section>
      </div>
      <Timetable packId={entry.packId} region={entry.region} />
      <SeatList packId={entry.packId} seats={seats} title={`Machines of ${entry.machineName}`} />
      <StudentList packId={entry.packId} region={entry.region} rosterSize={entry.rosterSize ?? 0} seatsKey={`${seatsKey(seats)}|${entry.rosterSize ?? 0}`} />
    </MachineCard>
  );
}

/** Who sits where, as a key: the student list is read again when it (or the list's size) changes. */
const seatsKey = (seats: readonly { student: string | null }[]) => seats.map((s) => s.student ?? '').join(',');

function Rows({ rows }: { rows: Array<[string, string]> }) {
  return (
    <dl className={styles.rows}>
      {rows.map(([k, v]) => (
        <div key={k} className={styles.row}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
