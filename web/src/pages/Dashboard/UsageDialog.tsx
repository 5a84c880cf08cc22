import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { formatCourseDate, formatCourseTime, type UsageAnswer } from '@hyperdesk/contract';
import { Dialog } from '../../components/Dialog';
import { usageCsv, usageQuery } from '../../api/usage';
import { saveFile } from '../../lib/save-file';
import styles from './Course.module.css';
import dash from './Dashboard.module.css';

interface Props {
  packId: string;
  machineName: string;
  /** A course: the instructor also sees each student's sessions. */
  course: boolean;
  open: boolean;
  onOpenChange(open: boolean): void;
}

type View = 'machines' | 'students';

/** `25 Nov '26, 14:05` on the country's clock (the one date formatter). */
const when = (iso: string, region: string) => `${formatCourseDate(iso, region)}, ${formatCourseTime(iso, region)}`;
const hoursText = (h: number) => `${h.toFixed(2)} h`;

function Rows({ usage, view }: { usage: UsageAnswer; view: View }) {
  const rows = view === 'students' ? (usage.students ?? []) : usage.runs;
  if (rows.length === 0) return <p className={styles.muted}>{view === 'students' ? 'No student has connected yet.' : 'Nothing has run yet.'}</p>;
  return (
    <div className={styles.tableWrap}>
      <table className={styles.table}>
        <thead>
          <tr>
            {view === 'students' ? <th scope="col">Student</th> : null}
            <th scope="col">Machine</th>
            <th scope="col">Start</th>
            <th scope="col">End</th>
            <th scope="col">Hours</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {'student' in r ? <td className={styles.student}>{String(r.student)}</td> : null}
              <td>{r.machineName}</td>
              <td>{when(r.start, usage.region)}</td>
              <td>{r.end ? when(r.end, usage.region) : 'Running now'}</td>
              <td>{hoursText(r.hours)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Usage history (issue 22.4): when the machine ran and the hours it used; for a course also by student; CSV export. */
export function UsageDialog({ packId, machineName, course, open, onOpenChange }: Props) {
  const [view, setView] = useState<View>('machines');
  const usage = useQuery({ ...usageQuery(packId), enabled: open });
  const csv = useMutation({ mutationFn: () => usageCsv(packId, view), onSuccess: ({ blob, filename }) => saveFile(blob, filename) });
  return (
    <Dialog open={open} onOpenChange={onOpenChange} title={`Usage of ${machineName}`} size="lg">
      {course ? (
        <div role="tablist" aria-label="Usage by" className={styles.blockHead}>
          {(['machines', 'students'] as const).map((v) => (
            <button key={v} type="button" role="tab" aria-selected={view === v} className={styles.smallButton} data-selected={view === v} onClick={() => setView(v)}>
              {v === 'machines' ? 'By machine' : 'By student'}
            </button>
          ))}
        </div>
      ) : null}
      {usage.isPending ? <p className={styles.muted}>Loading…</p> : null}
      {usage.isError ? <p role="alert">{usage.error.message}</p> : null}
      {usage.data ? (
        <>
          {usage.data.runs.length ? <p className={styles.muted}>{`Hours used in all: ${hoursText(usage.data.totalHours)}`}</p> : null}
          <Rows usage={usage.data} view={view} />
        </>
      ) : null}
      {csv.isError ? <p role="alert">{csv.error.message}</p> : null}
      <div className={dash.dialogActions}>
        <button type="button" className={dash.secondary} disabled={!usage.data || csv.isPending} onClick={() => csv.mutate()}>
          Download CSV
        </button>
      </div>
    </Dialog>
  );
}
