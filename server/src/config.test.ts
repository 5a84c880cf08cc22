import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config';

const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A data dir whose lxd/ holds what host-setup.sh left: the image's alias and the volume of its shared /usr. */
function dataDir(usrVolume?: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hd-config-'));
  made.push(dir);
  mkdirSync(path.join(dir, 'lxd'));
  writeFileSync(path.join(dir, 'lxd', 'image'), 'hyperdesk-desktop-0123456789abcdef\n');
  if (usrVolume !== undefined) writeFileSync(path.join(dir, 'lxd', 'usr-volume'), usrVolume);
  return dir;
}

describe('the shared /usr of desktops', () => {
  it('is the volume host-setup made beside the image it built', () => {
    const c = loadConfig({ DATA_DIR: dataDir('usr-7aff44a86eeae8f4\n') });
    expect(c.lxdImage).toBe('hyperdesk-desktop-0123456789abcdef');
    expect(c.lxdUsrVolume).toBe('usr-7aff44a86eeae8f4');
  });

  it('is none without the file, for an image of the operator’s own, and for a file that names no volume', () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).lxdUsrVolume).toBeNull();
    expect(loadConfig({ DATA_DIR: dataDir('usr-7aff44a86eeae8f4'), LXD_IMAGE: 'unreal-5-4' }).lxdUsrVolume).toBeNull();
    expect(loadConfig({ DATA_DIR: dataDir('usr; rm -rf /') }).lxdUsrVolume).toBeNull();
    expect(loadConfig({ DATA_DIR: dataDir('../usr') }).lxdUsrVolume).toBeNull();
  });

  it('can be named outright, and a name that is no volume name is refused', () => {
    expect(loadConfig({ DATA_DIR: dataDir(), LXD_USR_VOLUME: 'usr-unreal' }).lxdUsrVolume).toBe('usr-unreal');
    expect(() => loadConfig({ DATA_DIR: dataDir(), LXD_USR_VOLUME: '/srv/usr' })).toThrow(/LXD_USR_VOLUME: a volume name/);
  });
});
