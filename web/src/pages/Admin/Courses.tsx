import { useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { adminCoursesQuery } from '../../api/admin';
import { formatDay, PagedList, Panel, SearchForm } from './parts';
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
      <PagedList result={result} what="courses" empty={q ? `No course matches “${q}”.` : 'No courses yet.'}>
        {(items) => (
          <table className={styles.table}>
            <caption className="sr-only">Courses</caption>
            <thead>
              <tr>
                <th scope="col">Course</th>
                <th scope="col">Instructor</th>
                <th scope="col">Dates</th>
                <th scope="col" className={styles.num}>VMs</th>
                <th scope="col" className={styles.num}>Hours / VM</th>
                <th scope="col" className={styles.num}>Roster</th>
                <th scope="col" className={styles.num}>Seats in use</th>
                <th scope="col" className={styles.num}>Online</th>
              </tr>
            </thead>
            <tbody>
              {items.map((c) => (
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
              ))}
            </tbody>
          </table>
        )}
      </PagedList>
    </Panel>
  );
}
