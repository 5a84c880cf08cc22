import { afterEach, describe, expect, it } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCK_FILE, isAlive, processStartTime, readLock, tryAcquire } from '../src/lib/datadir-lock';

/** DATA_DIR's lock (PGlite is single-process): exclusive, holder named, stale holders taken over. */
describe('DATA_DIR lock', () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = mkdtempSync(path.join(tmpdir(), 'hd-lock-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('is exclusive and names its holder until released', () => {
    const d = dir();
    const first = tryAcquire(d, 'server');
    expect(first.ok).toBe(true);
    const second = tryAcquire(d, 'cli');
    expect(second).toEqual({ ok: false, holder: expect.objectContaining({ pid: process.pid, role: 'server' }) });
    if (!first.ok) return;
    first.lock.update({ adminPort: 4321 });
    expect(readLock(d)).toMatchObject({ pid: process.pid, role: 'server', adminPort: 4321 });
    first.lock.release();
    expect(existsSync(path.join(d, LOCK_FILE))).toBe(false);
    expect(tryAcquire(d, 'cli').ok).toBe(true);
  });

  it('takes over a lock whose process is gone, or whose pid now belongs to another process', () => {
    const d = dir();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(path.join(d, LOCK_FILE), JSON.stringify({ pid: dead, startTime: null, role: 'server', since: 'a' }));
    const r1 = tryAcquire(d, 'cli');
    expect(r1.ok).toBe(true);
    if (r1.ok) r1.lock.release();

    // Our own pid, but another start time: the pid was recycled, the holder is gone.
    expect(processStartTime(process.pid)).toMatch(/^\d+$/);
    const recycled = { pid: process.pid, startTime: '1', role: 'server', since: 'b' } as const;
    expect(isAlive(recycled)).toBe(false);
    writeFileSync(path.join(d, LOCK_FILE), JSON.stringify(recycled));
    expect(tryAcquire(d, 'cli').ok).toBe(true);

    // A half-written lock (holder killed between create and write) is stale too.
    const d2 = dir();
    writeFileSync(path.join(d2, LOCK_FILE), '{"pi');
    expect(tryAcquire(d2, 'server').ok).toBe(true);
  });

  it('release leaves a lock that is no longer its own', () => {
    const d = dir();
    const r = tryAcquire(d, 'cli');
    if (!r.ok) throw new Error('not acquired');
    const other = JSON.stringify({ pid: process.pid, startTime: processStartTime(process.pid), role: 'server', since: 'someone else' });
    writeFileSync(path.join(d, LOCK_FILE), other);
    r.lock.release();
    expect(readFileSync(path.join(d, LOCK_FILE), 'utf8')).toBe(other);
  });

  it('of processes racing for it (one of them over a stale lock), exactly one wins', async () => {
    const d = dir();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(path.join(d, LOCK_FILE), JSON.stringify({ pid: dead, startTime: null, role: 'server', since: 'stale' }));
    const lockModule = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/lib/datadir-lock.ts');
    // Each child waits for the same wall-clock moment, tries once, and holds what it got until the others tried.
    const at = Date.now() + 4000;
    const script = `import { tryAcquire } from ${JSON.stringify(lockModule)};
      while (Date.now() < ${at}) {}
      const r = tryAcquire(${JSON.stringify(d)}, 'cli');
      console.log(r.ok ? 'won' : 'lost');
      setTimeout(() => {}, 6000);`;
    const run = () =>
      new Promise<string>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], (_e, out) => resolve(out.trim()));
      });
    const outcomes = await Promise.all(Array.from({ length: 6 }, run));
    expect(outcomes.filter((o) => o === 'won')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'lost')).toHaveLength(5);
  }, 60_000);
});
