import type { Session, User } from '@hyperdesk/contract';

type Listener = (user: User | null) => void;

/** Set by the server beside the httpOnly session cookie and cleared with it (identity/sessions.ts SIGNED_IN_COOKIE). */
const SIGNED_IN_COOKIE = 'hd_signed_in';

function mayHaveSession(): boolean {
  return document.cookie.split(';').some((c) => c.trim().startsWith(`${SIGNED_IN_COOKIE}=`));
}

/** The server clears the marker when it refuses a refresh or logs out; this covers answers that never came. */
function forgetSession(): void {
  document.cookie = `${SIGNED_IN_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax`;
}

/**
 * Holds the short-lived id token in memory only; the refresh session lives in an httpOnly cookie, so a reload
 * calls /v1/auth/refresh to get a new id token, only when the server's signed-in marker says a session may exist
 * (a signed-out visitor makes no refresh call at all). Concurrent callers share one refresh.
 */
class SessionStore {
  private accessToken: string | null = null;
  private expiresAt = 0;
  private user: User | null = null;
  private refreshing: Promise<boolean> | null = null;
  private listeners = new Set<Listener>();
  /** True once the first refresh attempt after page load has finished. */
  ready = false;

  current(): User | null {
    return this.user;
  }

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  set(s: Session | null) {
    this.accessToken = s?.accessToken ?? null;
    this.expiresAt = s ? Date.now() + (s.expiresIn - 30) * 1000 : 0;
    this.user = s?.user ?? null;
    this.ready = true;
    this.listeners.forEach((fn) => fn(this.user));
  }

  /** Signed out on purpose: the marker goes even if the logout call never reached the server. */
  clear() {
    forgetSession();
    this.set(null);
  }

  async token(): Promise<string | null> {
    if (this.accessToken && Date.now() < this.expiresAt) return this.accessToken;
    if (!this.ready || this.accessToken) await this.refresh();
    return this.accessToken;
  }

  refresh(): Promise<boolean> {
    if (!mayHaveSession()) {
      this.set(null);
      return Promise.resolve(false);
    }
    this.refreshing ??= (async () => {
      try {
        const res = await fetch('/v1/auth/refresh', { method: 'POST', credentials: 'same-origin' });
        if (!res.ok) {
          if (res.status === 401) forgetSession();
          this.set(null);
          return false;
        }
        this.set((await res.json()) as Session);
        return true;
      } catch {
        this.set(null);
        return false;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }
}

export const session = new SessionStore();
