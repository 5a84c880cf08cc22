import { lazy, Suspense } from 'react';
import { Navigate, NavLink, Route, Routes } from 'react-router';
import { AppLayout } from '../../components/AppLayout';
import { Spinner } from '../../components/Spinner';
import styles from './Admin.module.css';
import { ConsoleGate } from './Gate';

const SECTIONS = [
  { path: 'users', label: 'Users', page: lazy(() => import('./Users')) },
  { path: 'fleet', label: 'Fleet', page: lazy(() => import('./Fleet')) },
  { path: 'orders', label: 'Orders', page: lazy(() => import('./Orders')) },
  { path: 'courses', label: 'Courses', page: lazy(() => import('./Courses')) },
  { path: 'messages', label: 'Messages', page: lazy(() => import('./Messages')) },
  { path: 'mail', label: 'Mail', page: lazy(() => import('./Mail')) },
  { path: 'hours', label: 'Hours', page: lazy(() => import('./Hours')) },
  { path: 'audit', label: 'Audit', page: lazy(() => import('./Audit')) },
  { path: 'sso', label: 'Single sign-on', page: lazy(() => import('./Sso')) },
] as const;

/**
 * /admin/*: the operator console (issue 15.2), one sub-route per section. Only reached with the admin claim, and
 * behind ConsoleGate: the missing step (password, two-factor sign-in) shows instead of the sections.
 */
export default function Admin() {
  return (
    <AppLayout title="Operator console">
      <ConsoleGate>
        <nav aria-label="Console sections">
          <ul className={styles.tabs}>
            {SECTIONS.map((s) => (
              <li key={s.path}>
                <NavLink to={`/admin/${s.path}`} className={styles.tab}>
                  {s.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <Suspense fallback={<Spinner label="Loading" center />}>
          <Routes>
            <Route index element={<Navigate to="users" replace />} />
            {SECTIONS.map(({ path, page: Page }) => (
              <Route key={path} path={path} element={<Page />} />
            ))}
            <Route path="*" element={<Navigate to="/" replace />} />
          </Routes>
        </Suspense>
      </ConsoleGate>
    </AppLayout>
  );
}
