import { describe, expect, it } from 'vitest';
import { manualClock } from '../../lib/clock';
import { hashPassword, verifyPassword, dummyVerify } from './passwords';
import { createLimiter } from './ratelimit';
import { memoryCounters } from '../../lib/counters';
import { isValidEmail, normalizeEmail } from './users';
import { parseCookie } from './sessions';
import { retryDelayMs } from '../mail/service';

describe('passwords', () => {
  it('hashes with scrypt, a random salt and stored parameters', async () => {
    const a = await hashPassword('correct horse');
    const b = await hashPassword('correct horse');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse', a)).toBe(true);
    expect(await verifyPassword('correct horse ', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('refuses malformed or tampered hashes instead of throwing', async () => {
    const h = await hashPassword('pw-123456');
    const parts = h.split('$');
    expect(await verifyPassword('pw-123456', 'plain-text')).toBe(false);
    expect(await verifyPassword('pw-123456', [...parts.slice(0, 5), 'AAAA'].join('$'))).toBe(false);
    expect(await verifyPassword('pw-123456', ['scrypt', 'x', ...parts.slice(2)].join('$'))).toBe(false);
    expect(await dummyVerify('anything')).toBe(false);
  });

  it('treats canonically equal Unicode passwords alike', async () => {
    const h = await hashPassword('caf\u00e9-pass');
    expect(await verifyPassword('cafe\u0301-pass', h)).toBe(true);
  });
});

describe('rate limiter', () => {
  it('counts per key within a window and starts over after it', async () => {
    const clock = manualClock(new Date('2030-01-01T00:00:00Z'));
    const l = createLimiter(memoryCounters(clock), clock, 'test', { limit: 3, windowMs: 60_000 });
    expect([await l.hit('a'), await l.hit('a'), await l.hit('a'), await l.hit('a')]).toEqual([true, true, true, false]);
    expect(await l.blocked('a')).toBe(true);
    expect(await l.blocked('b')).toBe(false);
    expect(await l.hit('b')).toBe(true);
    clock.advance(30_000);
    expect(await l.retryAfter('a')).toBe(30);
    clock.advance(30_000);
    expect(await l.blocked('a')).toBe(false);
    expect(await l.hit('a')).toBe(true);
    await l.hit('a');
    await l.hit('a');
    await l.reset('a');
    expect(await l.hit('a')).toBe(true);
  });

  it('stays bounded in memory under many keys', async () => {
    const clock = manualClock();
    const l = createLimiter(memoryCounters(clock), clock, 'test', { limit: 1, windowMs: 60_000 });
    for (let i = 0; i < 60_000; i++) await l.hit(`k${i}`);
    expect(await l.blocked('k59999')).toBe(true);
    expect(await l.blocked('k0')).toBe(false); // the oldest keys were dropped to stay within the cap
  });
});

describe('e-mail addresses and cookies', () => {
  it('accepts ordinary addresses and refuses malformed ones', () => {
    for (const ok of ['a@b.co', 'first.last+tag@sub.example.org', 'x_y-z@example.io']) expect(isValidEmail(ok), ok).toBe(true);
    for (const bad of ['', 'plain', 'a@b', 'a@@b.co', 'a b@c.co', '@b.co', 'a@.co', 'a@b..co', '.a@b.co', `${'l'.repeat(65)}@b.co`, 'a@b.c']) {
      expect(isValidEmail(bad), bad).toBe(false);
    }
    expect(normalizeEmail('  Ada@Example.COM ')).toBe('ada@example.com');
  });

  it('parses only well-formed session cookies', () => {
    const id = '0b6f1c9e-8f1d-4c7b-9a4e-2f8d1e3c5a7b';
    expect(parseCookie(`${id}.${'s'.repeat(43)}`)).toEqual({ id, secret: 's'.repeat(43) });
    for (const bad of [undefined, '', 'abc', `${id}`, `${id}.short`, `not-a-uuid.${'s'.repeat(43)}`, `${id}.${'s'.repeat(300)}`]) {
      expect(parseCookie(bad)).toBeNull();
    }
  });
});

describe('mail retries', () => {
  it('backs off 1, 2, 4 … minutes, at most an hour', () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(retryDelayMs(12)).toBe(3_600_000);
  });
});
