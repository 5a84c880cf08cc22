import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { startTestServer, type TestServer } from './harness';
import { createUser, randomIp } from './identity-helpers';

/** TRUST_PROXY decides whose X-Forwarded-For entry is the client; a forged leftmost entry must never count. */

const parse = (TRUST_PROXY: string) => loadConfig({ TRUST_PROXY } as NodeJS.ProcessEnv).TRUST_PROXY;

describe('TRUST_PROXY parsing', () => {
  it('reads false/0 as off, true/1 as one hop, N as N hops, and a list as trusted proxies', () => {
    expect(loadConfig({} as NodeJS.ProcessEnv).TRUST_PROXY).toBe(false);
    expect(parse('false')).toBe(false);
    expect(parse('0')).toBe(false);
    expect(parse('FALSE')).toBe(false);
    expect(parse('true')).toBe(1);
    expect(parse('1')).toBe(1);
    expect(parse('2')).toBe(2);
    expect(parse('10.0.0.1, 192.168.0.0/16,::1')).toEqual(['10.0.0.1', '192.168.0.0/16', '::1']);
  });

  it('stops with a clear message on anything else', () => {
    for (const bad of ['yes', 'no', 'on', '*', '-1', '11', '10.0.0.0/33', 'proxy.local', '1.5']) {
      expect(() => parse(bad), bad).toThrow(/TRUST_PROXY: expected false, true, a hop count|TRUST_PROXY: a hop count/);
    }
  });
});

const servers: TestServer[] = [];
afterAll(async () => Promise.all(servers.map((s) => s.close())));

async function server(TRUST_PROXY: string) {
  const s = await startTestServer({ env: { TRUST_PROXY } });
  servers.push(s);
  return s;
}

/** 80 wrong passwords for one account, each with its own X-Forwarded-For; the statuses answered. */
async function guess(s: TestServer, email: string, forwardedFor: (i: number) => string) {
  const statuses: number[] = [];
  for (let i = 0; i < 80; i++) {
    const res = await s.call('POST', '/v1/auth/login', {
      body: { email, password: `guess-${i}` },
      headers: { 'x-forwarded-for': forwardedFor(i) },
    });
    statuses.push(res.status);
  }
  return statuses;
}

describe('forged X-Forwarded-For', () => {
  for (const off of ['false', '0']) {
    it(`is ignored with TRUST_PROXY=${off}: rotating it does not escape the login limit`, async () => {
      const s = await server(off);
      const u = await createUser(s);
      const statuses = await guess(s, u.email, () => randomIp());
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(statuses.slice(10)).toEqual(Array(70).fill(429));
    });
  }

  it('with TRUST_PROXY=1 the rightmost address (the one our proxy saw) is the client', async () => {
    const s = await server('1');
    const u = await createUser(s);
    // The attacker writes the leftmost entries; the proxy appends the address it accepted the connection from.
    const attacker = '203.0.113.7';
    const statuses = await guess(s, u.email, () => `${randomIp()}, ${randomIp()}, ${attacker}`);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(70).fill(429));
    // Someone else behind the same proxy is a different client and still signs in.
    const other = await s.call('POST', '/v1/auth/login', {
      body: { email: u.email, password: u.password },
      headers: { 'x-forwarded-for': `${attacker}, 198.51.100.9` },
    });
    expect(other.status).toBe(200);
  });

  it('with a proxy address list, only hops from those proxies are believed', async () => {
    const s = await server('127.0.0.1,10.0.0.0/8');
    const u = await createUser(s);
    // 127.0.0.1 (the socket) and 10.x hops are trusted proxies, so 203.0.113.8 is the client however the left varies.
    const statuses = await guess(s, u.email, () => `${randomIp()}, 203.0.113.8, 10.1.2.3`);
    expect(statuses.slice(10)).toEqual(Array(70).fill(429));
  });
});
