import { useEffect } from 'react';
import { Link, useNavigate } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { meQuery } from '../../api/auth';
import { useAuth } from '../../auth/AuthProvider';
import { AppLayout } from '../../components/AppLayout';
import { Spinner } from '../../components/Spinner';
import styles from './Welcome.module.css';

const REDIRECT_MS = 5_000; // spec §9: welcome redirect after 5 seconds

/** /welcome (spec §2): greets the new user, then moves on to the dashboard. */
export default function Welcome() {
  const navigate = useNavigate();
  const { user } = useAuth();
  const me = useQuery({ ...meQuery(user?.uid ?? ''), enabled: !!user });
  const loaded = me.isSuccess || me.isError;
  const name = (me.data?.displayName || user?.displayName || sessionStorage.getItem('signup_username') || '').trim();

  useEffect(() => {
    if (!loaded) return;
    const timer = setTimeout(() => navigate('/dashboard', { replace: true }), REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [loaded, navigate]);

  return (
    <AppLayout>
      <section className={styles.card} aria-busy={!loaded}>
        {loaded ? (
          <>
            <svg className={styles.art} viewBox="0 0 64 64" aria-hidden="true" focusable="false">
              <circle cx="32" cy="32" r="32" fill="currentColor" opacity="0.12" />
              <path d="M20 33l8 8 16-17" fill="none" stroke="currentColor" strokeWidth="4" strokeLinecap="round" strokeLinejoin="round" />
            </svg>
            <h1 className={styles.title}>Welcome to the product, {name}!</h1>
            <p className={styles.text}>Your account is ready. We&apos;re taking you to your dashboard in a few seconds.</p>
            <Link className={styles.link} to="/dashboard" replace>
              Go to Dashboard now
            </Link>
          </>
        ) : (
          <Spinner label="Loading your account" center />
        )}
      </section>
    </AppLayout>
  );
}
