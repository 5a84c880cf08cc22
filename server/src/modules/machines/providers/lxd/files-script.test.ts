import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FILES_SCRIPT } from './files-script';

/** The files script run by this host's python3 on a home in a temporary folder (ext4 or btrfs: user xattrs work). */
describe('the files script: an upload found again by its mark', () => {
  let home: string;
  const run = (args: string[], input = '') => {
    const r = spawnSync('python3', ['-I', '-c', FILES_SCRIPT, ...args], { env: { HOME: home, PATH: '/usr/bin:/bin' }, input });
    return { code: r.status, answer: JSON.parse(r.stdout.toString().split('\n')[0]!) as Record<string, unknown> };
  };
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'hd-files-'));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('finds the file its put made under a free name, and no other', () => {
    mkdirSync(join(home, 'Uploads'));
    writeFileSync(join(home, 'Uploads', 'a.txt'), 'older');
    expect(run(['put', 'Uploads', 'a.txt', '5', 'f00d'], 'hello')).toEqual({ code: 0, answer: { name: 'a (1).txt', size: 5 } });
    expect(run(['put', 'Uploads', 'a.txt', '3', 'beef'], 'bye')).toEqual({ code: 0, answer: { name: 'a (2).txt', size: 3 } });
    expect(run(['found', 'Uploads', 'a.txt', 'f00d'])).toEqual({ code: 0, answer: { name: 'a (1).txt', size: 5 } });
    expect(run(['found', 'Uploads', 'a.txt', 'beef'])).toEqual({ code: 0, answer: { name: 'a (2).txt', size: 3 } });
    expect(run(['found', 'Uploads', 'a.txt', 'cafe'])).toMatchObject({ code: 3, answer: { error: 'not-found' } });
    expect(readFileSync(join(home, 'Uploads', 'a (1).txt'), 'utf8')).toBe('hello');
  });

  it('does not follow a link planted under a candidate name to a marked file elsewhere', () => {
    mkdirSync(join(home, 'Uploads'));
    mkdirSync(join(home, 'Elsewhere'));
    expect(run(['put', 'Elsewhere', 'a.txt', '5', 'f00d'], 'hello').code).toBe(0);
    symlinkSync(join(home, 'Elsewhere', 'a.txt'), join(home, 'Uploads', 'a.txt'));
    expect(run(['found', 'Uploads', 'a.txt', 'f00d'])).toMatchObject({ code: 3, answer: { error: 'not-found' } });
    expect(run(['found', 'Elsewhere', 'a.txt', 'f00d']).answer).toEqual({ name: 'a.txt', size: 5 });
  });
});
