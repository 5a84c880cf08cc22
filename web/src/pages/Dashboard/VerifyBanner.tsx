import { useEffect, useRef, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { emailVerificationQuery, resendVerification } from '../../api/auth';
import { ApiError } from '../../api/http';
import { useAuth } from '../../auth/AuthProvider';
import { session } from '../../auth/session';
import { balanceKey } from '../../api/wallet';
import styles from './Dashboard.module.css';

/**
 * Tells an unverified user what to do (issue 11): single users keep buying as before, with a gentle reminder; a
 * student whose address is on a course list learns that the course appears once the address is verified.
 */
export function VerifyBanner() {
  const { user } = useAuth();
  const status = useQuery({ ...emailVerificationQuery(user?.uid ?? ''), enabled: !!user, refetchOnWindowFocus: 'always' });
  const [sent, setSent] = useState<'idle' | 'sending' | 'sent' | string>('idle');
  const qc = useQueryClient();
  const wasUnverified = useRef(false);
  const verified = status.data?.emailVerified;
  useEffect(() => {
    if (verified === false) wasUnverified.current = true;
    // Verified in another tab: a fresh id token carries the claim, then the balance shows the course.
    if (verified && wasUnverified.current) {
      wasUnverified.current = false;
      void session.refresh().then(() => qc.invalidateQueries({ queryKey: balanceKey }));
    }
  }, [verified, qc]);
  if (!user || !status.data || status.data.emailVerified) return null;

  const resend = async () => {
    setSent('sending');
    try {
      await resendVerification();
      setSent('sent');
    } catch (err) {
      setSent(err instanceof ApiError && err.status === 429 ? err.message : 'Something went wrong, please try again.');
    }
  };
  const course = status.data.rosterCourses > 0;
  return (
    <section className={course ? `${styles.verify} ${styles.verifyCourse}` : styles.verify} aria-label="E-mail verification">
      <p className={styles.verifyText}>
        {course ? (
          <>
            <strong>Your course appears here once you verify your e-mail address.</strong> Open the verification link we
            sent to {user.email}, or the link in your course invitation e-mail.
          </>
        ) : (
          <>
            Please verify your e-mail address: open the link we sent to {user.email}.
          </>
        )}
      </p>
      {sent === 'sent' ? (
        <p className={styles.verifyText} role="status">
          E-mail sent. Please check your inbox.
        </p>
      ) : (
        <button type="button" className={styles.secondary} onClick={() => void resend()} disabled={sent === 'sending'}>
          Resend e-mail
        </button>
      )}
      {sent !== 'idle' && sent !== 'sending' && sent !== 'sent' ? (
        <p className={styles.verifyText} role="alert">
          {sent}
        </p>
      ) : null}
    </section>
  );
}
