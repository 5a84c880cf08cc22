import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync, mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

/**
 * PGlite is single-process: two processes writing one `DATA_DIR/pglite` corrupt it. Whoever opens it (the server, or
 * the admin CLI when no server runs) first holds `DATA_DIR/hyperdesk.lock`, created exclusively and naming its pid
 * (and the pid's start time, so a recycled pid is not mistaken for the holder). A lock whose holder is gone is stale
 * and taken over, by one process at a time. The server adds where its admin endpoint listens; the CLI sends its
 * commands there.
 */
export const LOCK_FILE = 'hyperdesk.lock';
export const ADMIN_SECRET_FILE = 'admin.secret';

export interface LockInfo {
  pid: number;
  /** /proc/<pid>/stat start time (clock ticks since boot); null where /proc is missing. */
  startTime: string | null;
  role: 'server' | 'cli';
  since: string;
  /** Server only, once its admin endpoint listens: loopback port of the endpoint. */
  adminPort?: number;
}

export interface HeldLock {
  info: LockInfo;
  /** Rewrites the lock's content (the server adds its admin port); the file stays ours. */
  update(patch: Partial<Pick<LockInfo, 'adminPort'>>): void;
  release(): void;
}

export type AcquireResult = { ok: true; lock: HeldLock } | { ok: false; holder: LockInfo };

export function lockPath(dataDir: string): string {
  return path.join(dataDir, LOCK_FILE);
}

export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may contain spaces, so count from the closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** True while the process that wrote `info` still runs (same pid, same start time). */
export function isAlive(info: Pick<LockInfo, 'pid' | 'startTime'>): boolean {
  if (!Number.isInteger(info.pid) || info.pid <= 0) return false; // kill(0 or -1, …) would address a process group
  try {
    process.kill(info.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (info.startTime === null) return true;
  const now = processStartTime(info.pid);
  return now === null || now === info.startTime;
}

export function readLock(dataDir: string): LockInfo | null {
  const raw = readRaw(lockPath(dataDir));
  return raw === null ? null : parseLock(raw);
}

/** The lock file's text; null when there is none. */
function readRaw(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return ''; // unreadable: debris, like a half-written one
  }
}

function parseLock(raw: string): LockInfo {
  try {
    const parsed = JSON.parse(raw) as LockInfo;
    if (typeof parsed.pid === 'number') return parsed;
  } catch {
    /* half-written (a holder killed between create and write): stale */
  }
  return { pid: -1, startTime: null, role: 'cli', since: '' };
}

/** One attempt to take the lock; a stale lock (holder gone) is removed and the attempt repeated. */
export function tryAcquire(dataDir: string, role: LockInfo['role']): AcquireResult {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = lockPath(dataDir);
  const info: LockInfo = { pid: process.pid, startTime: processStartTime(process.pid), role, since: new Date().toISOString() };
  for (let attempt = 0, removed = 0; attempt < 5; attempt++) {
    // Written in full under a private name, then linked into place: link(2) fails if the lock exists, like O_EXCL,
    // and nobody ever sees a half-written lock (so an unreadable one really is debris).
    const tmp = `${file}.new-${process.pid}-${randomBytes(4).toString('hex')}`;
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, JSON.stringify(info));
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, file);
      return { ok: true, lock: held(file, info) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
    const raw = readRaw(file);
    if (raw === null) continue;
    const holder = parseLock(raw);
    if (isAlive(holder)) return { ok: false, holder };
    // After removing a stale lock this process tries again (an attempt not counted: a few at most).
    if (removeStale(file, raw) && removed++ < 5) attempt--;
  }
  const holder = readLock(dataDir);
  return { ok: false, holder: holder ?? { pid: -1, startTime: null, role: 'cli', since: '' } };
}

/** A takeover guard older than this belongs to a process that died holding it. */
const GUARD_STALE_MS = 60_000;

/**
 * Removes a stale lock (answers whether it did), one process at a time: only the holder of `<lock>.takeover`
 * (created exclusively) may, and only while the lock still reads exactly as the stale one it saw. Nobody else can replace a lock that exists (they
 * link, which fails), so between that check and the unlink the stale lock stays what it was. (Moving it aside
 * instead, as before, let a process that linked its own lock meanwhile win beside the one whose lock was moved.)
 */
function removeStale(file: string, seen: string): boolean {
  const guard = `${file}.takeover`;
  try {
    closeSync(openSync(guard, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    try {
      if (Date.now() - statSync(guard).mtimeMs > GUARD_STALE_MS) unlinkSync(guard);
    } catch {
      /* released meanwhile */
    }
    return false; // another process is taking over: try again
  }
  try {
    if (readRaw(file) !== seen) return false;
    unlinkSync(file);
    return true;
  } finally {
    unlinkSync(guard);
  }
}

function held(file: string, info: LockInfo): HeldLock {
  let released = false;
  return {
    info,
    update(patch) {
      Object.assign(info, patch);
      const tmp = `${file}.tmp-${process.pid}`;
      writeFileSync(tmp, JSON.stringify(info), { mode: 0o600 });
      renameSync(tmp, file);
    },
    release() {
      if (released) return;
      released = true;
      // Only remove the file while it is still ours.
      try {
        const now = JSON.parse(readFileSync(file, 'utf8')) as LockInfo;
        if (now.pid === info.pid && now.since === info.since) unlinkSync(file);
      } catch {
        /* gone already */
      }
    },
  };
}

/**
 * Takes the lock, waiting while another process holds it (up to `waitMs`); `onWait` is told once who holds it.
 * Returns the holder when it did not let go in time.
 */
export async function acquire(
  dataDir: string,
  role: LockInfo['role'],
  opts: { waitMs: number; pollMs?: number; onWait?: (holder: LockInfo) => void; stopWaiting?: (holder: LockInfo) => boolean },
): Promise<AcquireResult> {
  const deadline = Date.now() + opts.waitMs;
  let told = false;
  for (;;) {
    const r = tryAcquire(dataDir, role);
    if (r.ok || Date.now() >= deadline || opts.stopWaiting?.(r.holder)) return r;
    if (!told) {
      told = true;
      opts.onWait?.(r.holder);
    }
    await new Promise((res) => setTimeout(res, opts.pollMs ?? 200));
  }
}

export function describeHolder(h: LockInfo): string {
  return h.role === 'server' ? `a Hyperdesk server (pid ${h.pid})` : `an admin command (pid ${h.pid})`;
}
