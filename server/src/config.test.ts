import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';

/** A data dir whose lxd/ holds what host-setup.sh left: the image's alias and, on Incus, the shared /usr. */
function dataDir(usr?: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hd-config-'));
  mkdirSync(path.join(dir, 'lxd'));
  writeFileSync(path.join(dir, 'lxd', 'image'), 'hyperdesk-desktop-0123456789abcdef\n');
  if (usr !== undefined) writeFileSync(path.join(dir, 'lxd', 'usr'), usr);
  return dir;
}

describe('the shared /usr of desktops (Incus)', () => {
  it('is the directory host-setup left beside the image it built', () => {
    const c = loadConfig({ DATA_DIR: dataDir('/var/lib/hyperdesk/usr/0123456789abcdef\n') });
    expect(c.lxdImage).toBe('hyperdesk-desktop-0123456789abcdef');
    expect(c.lxdSharedUsr).toBe('/var/lib/hyperdesk/usr/0123456789abcdef');
  });

  it('is none on LXD (no file), for an image of the operator’s own, and for a file that names no absolute path', () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).lxdSharedUsr).toBeNull();
    expect(loadConfig({ DATA_DIR: dataDir('/var/lib/hyperdesk/usr/0123456789abcdef'), LXD_IMAGE: 'unreal-5-4' }).lxdSharedUsr).toBeNull();
    expect(loadConfig({ DATA_DIR: dataDir('usr; rm -rf /') }).lxdSharedUsr).toBeNull();
  });

  it('can be named outright, and a relative path is refused', () => {
    expect(loadConfig({ DATA_DIR: dataDir(), LXD_SHARED_USR: '/srv/usr' }).lxdSharedUsr).toBe('/srv/usr');
    expect(() => loadConfig({ DATA_DIR: dataDir(), LXD_SHARED_USR: 'srv/usr' })).toThrow(/LXD_SHARED_USR: an absolute path/);
  });
});
