import type { Session, User } from '@hyperdesk/contract';

type Listener = (user: User | null) => void;

/**
 * Holds the short-lived id token in memory only; the refresh session lives in an httpOnly cookie, so a reload
 * calls /v1/auth/refresh to get a new id token. Concurrent callers share one refresh.
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

  async token(): Promise<string | null> {
    if (this.accessToken && Date.now() < this.expiresAt) return this.accessToken;
    if (!this.ready || this.accessToken) await this.refresh();
    return this.accessToken;
  }

  refresh(): Promise<boolean> {
    this.refreshing ??= (async () => {
      try {
        const res = await fetch('/v1/auth/refresh', { method: 'POST', credentials: 'same-origin' });
        if (!res.ok) {
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
