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
