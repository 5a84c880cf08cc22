import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * The agent's DTLS flight (server/agent/dtlsflight.py), in Debian's python3 against the host's OpenSSL 3 as the agent
 * runs it inside the desktop: a real DTLS handshake between two OpenSSL objects on BIOs that answer as GStreamer
 * 1.22's DTLS connection does (the MTU query answered with 0; fixtures/dtls_pair.py), the server with an RSA-2048
 * certificate as GStreamer makes. Without the agent's hook its first flight goes out in 256-byte datagrams and a lost
 * one waits 1 s; with it, in datagrams of up to 1,200 bytes, and 250 ms. The browser tests (stream-*) run the real
 * agent with the hook inside a desktop.
 */
const AGENT = path.join(import.meta.dirname, '../agent');
const PAIR = path.join(import.meta.dirname, 'fixtures/dtls_pair.py');
const dir = mkdtempSync(path.join(os.tmpdir(), 'dtlsflight-'));
const cert = path.join(dir, 'cert.pem');
const key = path.join(dir, 'key.pem');
beforeAll(() => {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=WebRTC'], {
    stdio: 'ignore',
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Handshake = { flight: number[]; timerUs: number; hadTimer: boolean; done: boolean };

const handshake = (hook: boolean): Handshake =>
  JSON.parse(execFileSync('/usr/bin/python3', [PAIR, AGENT, cert, key, ...(hook ? ['hook'] : [])], { encoding: 'utf8' })) as Handshake;

it("OpenSSL on GStreamer 1.22's BIO, as it is: the server's flight in 256-byte datagrams, sent again after 1 s", () => {
  const plain = handshake(false);
  expect(plain.done).toBe(true);
  expect(Math.max(...plain.flight)).toBeLessThanOrEqual(256);
  expect(plain.flight.length).toBeGreaterThanOrEqual(5);
  expect(plain.hadTimer).toBe(true);
  expect(plain.timerUs).toBeGreaterThan(500_000);
});

it("with the agent's hook: the same flight in at most two datagrams of up to 1,200 bytes, sent again after 250 ms", () => {
  const hooked = handshake(true);
  expect(hooked.done).toBe(true);
  expect(Math.max(...hooked.flight)).toBeGreaterThan(256);
  expect(Math.max(...hooked.flight)).toBeLessThanOrEqual(1200);
  expect(hooked.flight.length).toBeLessThanOrEqual(2);
  expect(hooked.hadTimer).toBe(true);
  expect(hooked.timerUs).toBeLessThanOrEqual(250_000);
  expect(hooked.timerUs).toBeGreaterThan(0);
});

it('the timer doubles from 250 ms at each resend, up to 60 s', () => {
  const out = execFileSync(
    '/usr/bin/python3',
    ['-c', 'import sys, json; sys.path.insert(0, sys.argv[1]); import dtlsflight as d\nt = [0]\nfor _ in range(12): t.append(d.next_resend_us(t[-1]))\nprint(json.dumps(t[1:]))', AGENT],
    { encoding: 'utf8' },
  );
  const steps = JSON.parse(out) as number[];
  expect(steps.slice(0, 4)).toEqual([250_000, 500_000, 1_000_000, 2_000_000]);
  expect(steps.at(-1)).toBe(60_000_000);
});
