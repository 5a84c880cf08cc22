import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { lxdProjectFor } from '../src/config';
import { prepareLxd, removeProject } from './lxd-fixtures';

const run = promisify(execFile);
const SETUP = path.join(import.meta.dirname, '../../scripts/lxd/host-setup.sh');

/** Data dirs (each with its LXD project) and other scratch dirs this file made. */
const dataDirs: string[] = [];
const scratch: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) removeProject(lxdProjectFor(dir));
  for (const dir of [...dataDirs, ...scratch]) rmSync(dir, { recursive: true, force: true });
});

/**
 * A busy daemon once answered host-setup's `lxc network acl show` with an error while the ACL existed; the create that
 * followed said "already exists" and a server's start failed. Here every `show` fails (an `lxc` first on PATH that
 * passes everything else to the real one), on a host whose pool, network, ACL and project all exist already.
 */
it('a set-up whose every `lxc … show` fails still finishes when the objects exist (a busy daemon)', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hd-setup-'));
  dataDirs.push(dataDir);
  await prepareLxd(dataDir); // the project exists from here on
  const bin = mkdtempSync(path.join(tmpdir(), 'hd-lxc-shim-'));
  scratch.push(bin);
  const real = (await run('sh', ['-c', 'command -v lxc'])).stdout.trim();
  writeFileSync(
    path.join(bin, 'lxc'),
    `#!/bin/sh\nfor a in "$@"; do [ "$a" = show ] && { echo "Error: busy" >&2; exit 1; }; done\nexec ${real} "$@"\n`,
  );
  chmodSync(path.join(bin, 'lxc'), 0o755);

  const { stdout } = await run('sh', [SETUP], {
    env: { ...process.env, DATA_DIR: dataDir, PATH: `${bin}:${process.env.PATH}` },
    timeout: 600_000,
  });

  expect(stdout).toContain(`ready (project ${lxdProjectFor(dataDir)})`);
  expect(readFileSync(path.join(dataDir, 'lxd', 'env'), 'utf8')).toContain(`LXD_PROJECT=${lxdProjectFor(dataDir)}`);
});

/**
 * The desktops' firewall rules (the ACL on the bridge) are rewritten only when they change: each set-up (every
 * `npm start`, every test server) once rewrote them, because the comparison took in LXD's `config:` and `used_by:`
 * lines, and each rewrite makes LXD apply them to the bridge again. Its `lxc` calls are logged by a shim on PATH.
 */
it('a set-up of a known deployment leaves the desktops’ firewall rules as they are', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hd-setup-'));
  dataDirs.push(dataDir);
  await prepareLxd(dataDir);
  const bin = mkdtempSync(path.join(tmpdir(), 'hd-lxc-log-'));
  scratch.push(bin);
  const real = (await run('sh', ['-c', 'command -v lxc'])).stdout.trim();
  const calls = path.join(bin, 'calls.log');
  writeFileSync(path.join(bin, 'lxc'), `#!/bin/sh\necho "$*" >> ${calls}\nexec ${real} "$@"\n`);
  chmodSync(path.join(bin, 'lxc'), 0o755);
  const env = { ...process.env, DATA_DIR: dataDir, PATH: `${bin}:${process.env.PATH}` };
  // The rules name the host's addresses: a run during which another test added or removed one may rewrite them.
  const addresses = async () => (await run('ip', ['-4', '-o', 'addr', 'show'])).stdout.replace(/\s+valid_lft.*$/gm, '');
  let rewrites = -1;
  for (let attempt = 0; attempt < 5 && rewrites !== 0; attempt++) {
    const before = await addresses();
    writeFileSync(calls, '');
    const { stdout } = await run('sh', [SETUP], { env, timeout: 600_000 });
    expect(stdout).toContain(`ready (project ${lxdProjectFor(dataDir)})`);
    if ((await addresses()) !== before) continue;
    rewrites = readFileSync(calls, 'utf8').split('\n').filter((l) => l.startsWith('network acl edit')).length;
    expect(readFileSync(calls, 'utf8')).toContain('network acl show hd-desktops'); // the shim saw the set-up's calls
  }
  expect(rewrites).toBe(0);
});
