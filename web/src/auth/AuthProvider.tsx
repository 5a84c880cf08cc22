import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import type { User } from '@hyperdesk/contract';
import { session } from './session';

type Status = 'loading' | 'signedIn' | 'signedOut';
interface AuthState {
  status: Status;
  user: User | null;
}

const AuthContext = createContext<AuthState>({ status: 'loading', user: null });

/** Restores the session from the refresh cookie on load and follows every later sign-in and sign-out. */
export function AuthProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<AuthState>(() =>
    session.ready ? toState(session.current()) : { status: 'loading', user: null },
  );
  useEffect(() => {
    const off = session.subscribe((u) => setState(toState(u)));
    if (!session.ready) void session.refresh();
    return off;
  }, []);
  return <AuthContext.Provider value={state}>{children}</AuthContext.Provider>;
}

function toState(user: User | null): AuthState {
  return { status: user ? 'signedIn' : 'signedOut', user };
}

export function useAuth(): AuthState {
  return useContext(AuthContext);
}
