import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { shWithShims } from './shell-script';

const APT_SH = path.join(import.meta.dirname, '../../scripts/apt.sh');
const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/**
 * A PATH whose apt-get records each call and answers as apt 2.6 does while another apt holds the lists lock, `busy`
 * times, then as `last` says (ok, or another error).
 */
function fakeApt(busy: number, last: 'ok' | 'broken'): { dir: string; calls: () => string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'hd-apt-'));
  made.push(dir);
  const log = path.join(dir, 'calls');
  writeFileSync(log, '');
  writeFileSync(path.join(dir, 'apt-get'), `#!/bin/sh
echo "$*" >> ${log}
n=$(wc -l < ${log})
if [ "$n" -le ${busy} ]; then
  echo "Reading package lists..."
  echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
  echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
  exit 100
fi
${last === 'ok' ? 'echo "Hit:1 http://deb.debian.org/debian bookworm InRelease"; exit 0' : 'echo "E: Unable to locate package nosuchthing" >&2; exit 100'}
`);
  chmodSync(path.join(dir, 'apt-get'), 0o755);
  return { dir, calls: () => readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

const aptGet = (dir: string, args: string, env: Record<string, string> = {}) =>
  shWithShims(`. ${APT_SH}; apt_get ${args}`, dir, { APT_LOCK_STEP: '0', ...env });

/** scripts/apt.sh, through which npm start and npm test install Debian packages. */
describe('apt_get', () => {
  it('waits while another apt holds the locks, says so once, then installs', async () => {
    const apt = fakeApt(3, 'ok');
    const r = await aptGet(apt.dir, 'update -qq');
    expect(r.code).toBe(0);
    expect(apt.calls()).toHaveLength(4);
    expect(apt.calls()[0]).toBe('-o DPkg::Lock::Timeout=10 update -qq');
    expect(r.stderr.match(/Waiting for another package manager to finish \(apt-get update\)/g)).toHaveLength(1);
    expect(r.stdout).toBe(''); // apt's own chatter stays out of npm start's progress
  });

  it('fails at once, with apt’s words, on any other error', async () => {
    const apt = fakeApt(0, 'broken');
    const r = await aptGet(apt.dir, 'install -y nosuchthing');
    expect(r.code).toBe(1);
    expect(apt.calls()).toHaveLength(1);
    expect(r.stderr).toContain('E: Unable to locate package nosuchthing');
  });

  it('gives up with the lock’s message after its tries', async () => {
    const apt = fakeApt(1000, 'ok');
    const r = await aptGet(apt.dir, 'update -qq', { APT_LOCK_TRIES: '6' });
    expect(r.code).toBe(1);
    expect(apt.calls()).toHaveLength(6);
    expect(r.stderr).toContain('Could not get lock /var/lib/apt/lists/lock');
  });
});
