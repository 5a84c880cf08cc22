import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shWithShims } from './shell-script';

const SCRIPT = path.join(import.meta.dirname, '../../scripts/build-web.sh');

/**
 * scripts/build-web.sh, which npm start runs: the web app is built again only when something it is built from
 * changed. Run in a checkout of its own (the script copied into it), whose `npm` is a shim on PATH that logs each
 * build and writes web/dist, or fails when told to.
 */
describe('the web build of npm start', () => {
  let root: string;
  let bin: string;
  const builds = () => readFileSync(path.join(root, 'builds'), 'utf8').split('\n').filter(Boolean).length;
  const build = async (env: Record<string, string> = {}) => {
    const r = await shWithShims(`sh ${path.join(root, 'scripts/build-web.sh')}`, bin, env);
    return { code: r.code, out: r.stdout };
  };
  /** `file` changed after the last build (its stamp set back a minute: the file system's clock may be coarse). */
  const later = (file: string) => {
    const past = new Date(Date.now() - 60_000);
    utimesSync(path.join(root, 'node_modules/.cache/hyperdesk/web-built'), past, past);
    const now = new Date();
    utimesSync(path.join(root, file), now, now);
  };

  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'hd-webbuild-'));
    bin = path.join(root, 'bin');
    for (const dir of ['scripts', 'web/src/pages', 'web/public', 'contract/src', 'node_modules', 'bin']) mkdirSync(path.join(root, dir), { recursive: true });
    copyFileSync(SCRIPT, path.join(root, 'scripts/build-web.sh'));
    for (const f of ['web/index.html', 'web/package.json', 'web/tsconfig.json', 'web/vite.config.ts', 'web/src/main.tsx', 'web/src/pages/Home.tsx', 'contract/src/index.ts', 'package-lock.json', 'node_modules/.package-lock.json']) {
      writeFileSync(path.join(root, f), f);
    }
    writeFileSync(path.join(root, 'builds'), '');
    writeFileSync(path.join(bin, 'npm'), `#!/bin/sh
echo "$*" >> "${root}/builds"
[ -n "$FAIL_BUILD" ] && exit 1
mkdir -p web/dist && echo built > web/dist/index.html
`);
    chmodSync(path.join(bin, 'npm'), 0o755);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('builds the first time, then not while nothing changed', async () => {
    expect(await build()).toEqual({ code: 0, out: 'Building the web app...\n' });
    expect(builds()).toBe(1);
    expect(await build()).toEqual({ code: 0, out: 'The web app is up to date (web/dist).\n' });
    expect(builds()).toBe(1);
  });

  it('builds again after a source, the contract or the installed packages changed', async () => {
    const before = builds();
    for (const f of ['web/src/pages/Home.tsx', 'contract/src/index.ts', 'node_modules/.package-lock.json', 'web/vite.config.ts']) {
      later(f);
      await build();
      expect(await build()).toEqual({ code: 0, out: 'The web app is up to date (web/dist).\n' });
    }
    expect(builds()).toBe(before + 4);
  });

  it('builds again after a source was deleted (its folder changed)', async () => {
    const before = builds();
    unlinkSync(path.join(root, 'web/src/pages/Home.tsx'));
    later('web/src/pages');
    await build();
    expect(builds()).toBe(before + 1);
  });

  it('after a failed build, builds again next time; without web/dist, builds', async () => {
    const before = builds();
    later('web/src/main.tsx');
    expect((await build({ FAIL_BUILD: '1' })).code).not.toBe(0);
    expect((await build()).out).toBe('Building the web app...\n');
    rmSync(path.join(root, 'web/dist'), { recursive: true });
    expect((await build()).out).toBe('Building the web app...\n');
    expect(builds()).toBe(before + 3);
  });
});
