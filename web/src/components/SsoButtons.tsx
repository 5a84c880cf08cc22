import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { SSO_MESSAGES, type SsoErrorCode } from '@hyperdesk/contract';
import { ssoButtonsQuery, ssoStartUrl } from '../api/sso';
import { authDialogPrefill } from '../auth/dialogs';
import { FormMessage } from './FormMessage';
import styles from './SsoButtons.module.css';

const isSsoError = (code: string | undefined): code is SsoErrorCode => !!code && Object.hasOwn(SSO_MESSAGES, code);

/**
 * "Continue with <school>" for each identity provider an operator enabled (issue 23.1), under the Login and Sign Up
 * forms. A button is a plain link: the tab goes to the server, the school's sign-in page, and back. A sign-in that
 * came back refused (`/?login=1&sso_error=<code>`) says why here. Nothing shows while the list loads or when there
 * are no providers.
 */
export function SsoButtons({ intent }: { intent: 'login' | 'signup' }) {
  const { data } = useQuery(ssoButtonsQuery());
  const [error] = useState(() => authDialogPrefill().ssoError);
  const [leaving, setLeaving] = useState<string | null>(null);
  const items = data?.items ?? [];

  return (
    <>
      {isSsoError(error) ? <FormMessage>{SSO_MESSAGES[error]}</FormMessage> : null}
      {items.length ? (
        <div className={styles.sso}>
          <p className={styles.or}>
            <span>or</span>
          </p>
          {items.map((p) => (
            <a key={p.id} className={styles.button} href={ssoStartUrl(p.id, intent)} aria-busy={leaving === p.id} onClick={() => setLeaving(p.id)}>
              <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
                <path d="M12 3 2 8l10 5 8-4v6h2V8L12 3Z M6 12.2V16c0 1.7 2.7 3 6 3s6-1.3 6-3v-3.8l-6 3-6-3Z" fill="currentColor" />
              </svg>
              {leaving === p.id ? `Opening ${p.name}…` : `Continue with ${p.name}`}
            </a>
          ))}
        </div>
      ) : null}
    </>
  );
}
