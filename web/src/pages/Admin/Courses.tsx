import { useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { adminCoursesQuery } from '../../api/admin';
import { formatDay, Panel, SearchForm } from './parts';
import { KeysetTable } from './KeysetTable';
import styles from './Admin.module.css';

/** Courses: instructor, dates, VMs, roster size, seats in use. */
export default function Courses() {
  const [q, setQ] = useState('');
  const result = useInfiniteQuery(adminCoursesQuery(q));
  return (
    <Panel
      title="Courses"
      hint="Course packs with their instructor, dates, machines, roster and seats in use."
      filters={<SearchForm label="Course or instructor" placeholder="course name or e-mail" onSearch={setQ} />}
    >
      <KeysetTable
        result={result}
        what="courses"
        empty={q ? `No course matches “${q}”.` : 'No courses yet.'}
        caption="Courses"
        columns={['Course', 'Instructor', 'Dates', { label: 'VMs', num: true }, { label: 'Hours / VM', num: true }, { label: 'Roster', num: true }, { label: 'Seats in use', num: true }, { label: 'Online', num: true }]}
        row={(c) => (
          <tr key={c.id}>
            <td>
              {c.name}
              <span className={styles.sub}>
                {c.platform} · {c.region}
              </span>
            </td>
            <td>
              {c.instructor.name ?? '—'}
              <span className={styles.sub}>{c.instructor.email ?? c.instructor.uid}</span>
            </td>
            <td>
              {formatDay(c.startAt)} – {formatDay(c.endAt)}
            </td>
            <td className={styles.num}>{c.vms}</td>
            <td className={styles.num}>{c.hoursPerMachine}</td>
            <td className={styles.num}>{c.rosterSize}</td>
            <td className={styles.num}>{c.seatsInUse}</td>
            <td className={styles.num}>{c.machinesOnline}</td>
          </tr>
        )}
      />
    </Panel>
  );
}
