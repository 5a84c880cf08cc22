import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { iceServersFor, turnCredentials, TURN_TTL_SECONDS } from '../src/modules/connect/turn';

describe('TURN credentials (coturn REST scheme)', () => {
  it('username is "<expiry unix>:<userId>" and credential is base64(HMAC-SHA1(secret, username))', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const { username, credential } = turnCredentials('s3cret-s3cret-s3cret', 'user-1', now, 3600);
    expect(username).toBe(`${now / 1000 + 3600}:user-1`);
    expect(credential).toBe(createHmac('sha1', 's3cret-s3cret-s3cret').update(username).digest('base64'));
    // A known vector, so a change of algorithm or encoding cannot pass unnoticed.
    expect(turnCredentials('0123456789abcdef', 'u', 0, 100)).toEqual({ username: '100:u', credential: 'oeOcHK9YqW/EiQOX1G3WMR0yGmA=' });
  });

  it('hands out STUN as given, TURN with fresh credentials, and nothing without configuration', () => {
    expect(iceServersFor({ urls: [] }, 'u', 0)).toEqual([]);
    const servers = iceServersFor({ urls: ['stun:stun.example:3478', 'turn:turn.example:3478?transport=udp'], secret: 'x'.repeat(16) }, 'u', 1000_000);
    expect(servers[0]).toEqual({ urls: ['stun:stun.example:3478'] });
    expect(servers[1]!.urls).toEqual(['turn:turn.example:3478?transport=udp']);
    expect(servers[1]!.username).toBe(`${1000 + TURN_TTL_SECONDS}:u`);
  });

  it('config: TURN_URLS is a comma list and turn: servers need TURN_SECRET', () => {
    expect(loadConfig({ TURN_URLS: 'stun:a:3478, turn:b:3478', TURN_SECRET: 'y'.repeat(16) }).TURN_URLS).toEqual(['stun:a:3478', 'turn:b:3478']);
    expect(() => loadConfig({ TURN_URLS: 'turn:b:3478' })).toThrow(/TURN_SECRET/);
    expect(() => loadConfig({ TURN_URLS: 'http://b' })).toThrow(/TURN_URLS/);
    expect(loadConfig({}).TURN_URLS).toEqual([]);
  });
});
