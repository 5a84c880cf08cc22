import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';

/**
 * The streaming agent's kept DTLS key (server/agent/dtlskey.py), run in Debian's python3 against the host's OpenSSL 3
 * as the agent runs it inside the desktop: an RSA key generated the way GStreamer 1.22's DTLS generates its own
 * (RSA_new, then RSA_generate_key_ex 2048) is the saved key while the agent's hook is on, a valid private key, and
 * new again once the file is missing, broken, of another size or a month old; outside the hook keys are new.
 * The browser tests (stream-*) run the real agent with the hook inside a desktop.
 */
const AGENT = path.join(import.meta.dirname, '../agent');
const dir = mkdtempSync(path.join(os.tmpdir(), 'dtlskey-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Made = { outcome: string; valid: number; modulus: string; after: string };

function makeKey(file: string): Made {
  const script = `
import sys, ctypes, json
sys.path.insert(0, ${JSON.stringify(AGENT)})
import dtlskey
c = dtlskey._crypto()
c.BN_new.restype = ctypes.c_void_p
c.BN_set_word.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
c.RSA_check_key.argtypes = [ctypes.c_void_p]
c.BN_bn2hex.restype = ctypes.c_char_p
c.BN_bn2hex.argtypes = [ctypes.c_void_p]
def like_gstreamer():
    rsa = c.RSA_new()
    e = c.BN_new()
    c.BN_set_word(e, 65537)
    assert c.RSA_generate_key_ex(rsa, 2048, e, None) == 1
    n = ctypes.c_void_p()
    c.RSA_get0_key(rsa, ctypes.byref(n), None, None)
    return rsa, c.BN_bn2hex(n).decode()
made = {}
def make():
    made['rsa'], made['n'] = like_gstreamer()
outcome = dtlskey.with_kept_key(sys.argv[1], make)
print(json.dumps({'outcome': outcome, 'valid': c.RSA_check_key(made['rsa']), 'modulus': made['n'], 'after': like_gstreamer()[1]}))
`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, file], { encoding: 'utf8' })) as Made;
}

function modulusOf(file: string): string {
  const out = execFileSync('openssl', ['rsa', '-in', file, '-noout', '-modulus'], { encoding: 'utf8' });
  return out.trim().replace(/^Modulus=/, '');
}

it('the first start makes the key and saves it for its user only; the next start takes it back', () => {
  const file = path.join(dir, 'a', 'state', 'dtls-key.pem');
  const first = makeKey(file);
  expect(first.outcome).toBe('new');
  expect(first.valid).toBe(1);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
  expect(modulusOf(file)).toBe(first.modulus);
  const second = makeKey(file);
  expect(second).toMatchObject({ outcome: 'kept', valid: 1, modulus: first.modulus });
  // Only the decoder's key while the hook is on: any key made afterwards is new.
  expect(second.after).not.toBe(first.modulus);
  expect(first.after).not.toBe(first.modulus);
});

it('a broken file, a key of another size or a month-old key: a new key, saved in its place', () => {
  const file = path.join(dir, 'b.pem');
  writeFileSync(file, '-----BEGIN RSA PRIVATE KEY-----\nbroken\n-----END RSA PRIVATE KEY-----\n');
  const broken = makeKey(file);
  expect(broken).toMatchObject({ outcome: 'new', valid: 1 });
  expect(modulusOf(file)).toBe(broken.modulus);

  execFileSync('openssl', ['genrsa', '-traditional', '-out', file, '1024'], { stdio: 'ignore' });
  const small = makeKey(file);
  expect(small).toMatchObject({ outcome: 'new', valid: 1 });
  expect(small.modulus).toHaveLength(512);

  const old = new Date(Date.now() - 31 * 86400_000);
  utimesSync(file, old, old);
  const stale = makeKey(file);
  expect(stale.outcome).toBe('new');
  expect(stale.modulus).not.toBe(small.modulus);
  expect(makeKey(file)).toMatchObject({ outcome: 'kept', modulus: stale.modulus });
});

it('a key that cannot be saved (its folder is a file) is still a working new key', () => {
  const blocker = path.join(dir, 'blocked');
  writeFileSync(blocker, 'not a folder');
  const made = makeKey(path.join(blocker, 'dtls-key.pem'));
  expect(made).toMatchObject({ outcome: 'new', valid: 1 });
  expect(readFileSync(blocker, 'utf8')).toBe('not a folder');
});
