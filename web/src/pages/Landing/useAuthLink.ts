import { useEffect } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { useAuth } from '../../auth/AuthProvider';
import { openAuthDialog, type AuthDialogName } from '../../auth/dialogs';

/** An address worth filling in (the server checks it properly when the form is sent). */
const looksLikeEmail = (v: string) => v.length <= 254 && /^[^\s@]+@[^\s@]+$/.test(v);

/** Which popup a link asks for: `/?signup=1` (a new address) or `/?login=1` (an address with an account). */
function wantedDialog(params: URLSearchParams): Extract<AuthDialogName, 'login' | 'signup'> | null {
  if (params.get('signup') === '1') return 'signup';
  if (params.get('login') === '1') return 'login';
  return null;
}

/**
 * Links into the landing page that open an account popup: a course invitation's `/?signup=1&email=…` or
 * `/?login=1&email=…` (server/src/modules/courses/service.ts invitationLink). A visitor who is signed out gets the
 * popup with the address filled in, and the address bar loses the parameters (the e-mail address stays out of the
 * history); one who is signed in already goes to the dashboard. An effect: the popups live in a store outside React
 * (auth/dialogs.ts), opened once the session is known.
 */
export function useAuthLink(): void {
  const { status } = useAuth();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const dialog = wantedDialog(params);
  const email = params.get('email')?.trim().toLowerCase() ?? '';
  // `/?login=1&mfa=<challenge>`: a sign-in (SSO) that waits for its second factor opens Login at the code step.
  const mfa = dialog === 'login' ? (params.get('mfa') ?? '') : '';
  // `/?login=1&sso_error=<code>`: a sign-in through the school's provider was refused (SsoButtons says why).
  const ssoError = params.get('sso_error') ?? '';
  useEffect(() => {
    if (!dialog || status === 'loading') return;
    if (status === 'signedIn') {
      void navigate('/dashboard', { replace: true });
      return;
    }
    openAuthDialog(dialog, {
      ...(looksLikeEmail(email) ? { email } : {}),
      ...(/^[\w-]{20,200}$/.test(mfa) ? { mfa } : {}),
      ...(/^sso\/[a-z-]{1,40}$/.test(ssoError) ? { ssoError } : {}),
    });
    void navigate({ pathname: '/', search: '' }, { replace: true });
  }, [dialog, email, mfa, ssoError, status, navigate]);
}
