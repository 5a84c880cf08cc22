import { Link } from 'react-router';
import { useAuth } from '../../auth/AuthProvider';
import { openAuthDialog } from '../../auth/dialogs';

/** The public pages' main call to action: visitors get the Sign Up popup, signed-in users go straight to setup. */
export function GetStarted({ className, label = 'Get started' }: { className?: string; label?: string }) {
  const { status } = useAuth();
  if (status === 'signedIn') {
    return (
      <Link to="/setup" className={className}>
        {label}
      </Link>
    );
  }
  return (
    <button type="button" className={className} onClick={() => openAuthDialog('signup')}>
      {label}
    </button>
  );
}
