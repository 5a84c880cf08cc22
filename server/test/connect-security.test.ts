import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { and, eq } from 'drizzle-orm';
import { GATEWAY_CLOSE } from '@hyperdesk/contract';
import { mailOutbox } from '../src/db/schema/index';
import type { Endpoint } from '../src/modules/machines/providers/types';
import { startTestServer, type TestServer } from './harness';
import { fakeDesktop, fakeProvider, openGateway, seedMachine, ticketFor, until, type FakeDesktop } from './connect-fixtures';
import { createUser, fromIp, randomIp } from './identity-helpers';

/** Issue 11.3: a password change ends desktop sessions, foreign pages cannot open one, tickets stay out of logs. */

const PUBLIC_URL = 'https://desk.example.com';
const endpoints = new Map<string, Endpoint>();
const logLines: string[] = [];
let s: TestServer;
let desk: FakeDesktop;

beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _enc, done) {
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  s = await startTestServer({
    env: { PUBLIC_URL, TRUST_PROXY: 'true' },
    overrides: { machineProvider: fakeProvider(endpoints) },
    logger: { level: 'info', stream },
  });
  desk = await fakeDesktop('desk');
});
afterAll(async () => {
  await s?.close();
  await desk?.close();
});

async function ownMachine() {
  const u = await createUser(s);
  const id = await seedMachine(s, { ownerId: u.row.id });
  endpoints.set(id, desk.endpoint);
  return { u, id };
}

async function session(token: string, id: string) {
  const c = await openGateway(s, (await ticketFor(s, token, id)).wsPath);
  await c.text('hello');
  return c;
}

describe('a password change ends open desktop sessions', () => {
  it('closes the session after a change from the account page', async () => {
    const { u, id } = await ownMachine();
    const c = await session(u.token, id);
    const changed = await s.call('POST', '/v1/user/password', {
      token: u.token,
      body: { currentPassword: u.password, newPassword: 'a-new-secret-1', confirmPassword: 'a-new-secret-1' },
    });
    expect(changed.status).toBe(200);
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.accessLost);
    expect(c.texts.find((t) => t.type === 'stopped')?.code).toBe('access-lost');
    // A session opened after the change is fine.
    const again = await session(changed.body.accessToken, id);
    again.ws.close();
    await again.closed;
  });

  it('closes the session after a reset through the e-mailed link', async () => {
    const { u, id } = await ownMachine();
    const c = await session(u.token, id);
    expect((await s.call('POST', '/v1/auth/forgot', { body: { email: u.email }, headers: fromIp(randomIp()) })).status).toBe(200);
    const mail = await until(async () => {
      const [m] = await s.database.db.select().from(mailOutbox).where(and(eq(mailOutbox.toAddr, u.email), eq(mailOutbox.kind, 'password-reset')));
      return m;
    }, 'the reset mail');
    const token = /reset-password\?token=([\w-]+)/.exec(mail.bodyText)![1]!;
    expect((await s.call('POST', '/v1/auth/reset', { body: { token, password: 'reset-secret-2' }, headers: fromIp(randomIp()) })).status).toBe(200);
    expect((await c.closed).code).toBe(GATEWAY_CLOSE.accessLost);
  });
});

/** Opens the gateway with an Origin header; answers the upgrade's HTTP status (101 when it opened). */
function upgradeStatus(wsPath: string, origin?: string): Promise<number> {
  const ws = new WebSocket(s.base.replace(/^http/, 'ws') + wsPath, origin ? { origin } : {});
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.once('error', reject);
  });
}

describe('the gateway upgrade checks Origin', () => {
  it('refuses a page of another site with 403 and keeps the ticket usable', async () => {
    const { u, id } = await ownMachine();
    const { wsPath } = await ticketFor(s, u.token, id);
    expect(await upgradeStatus(wsPath, 'https://evil.example')).toBe(403);
    expect(await upgradeStatus(wsPath, 'http://127.0.0.1')).toBe(403); // not PUBLIC_URL's origin
    expect(await upgradeStatus(wsPath, `${PUBLIC_URL}:8443`)).toBe(403);
    expect(await upgradeStatus(wsPath, PUBLIC_URL)).toBe(101);
  });

  it('lets a client without Origin (not a browser) in with a valid ticket', async () => {
    const { u, id } = await ownMachine();
    expect(await upgradeStatus((await ticketFor(s, u.token, id)).wsPath)).toBe(101);
  });
});

describe('request logs', () => {
  it('never contain a gateway ticket or a reset token', async () => {
    const { u, id } = await ownMachine();
    const { ticket, wsPath } = await ticketFor(s, u.token, id);
    const c = await openGateway(s, wsPath);
    await c.text('hello');
    c.ws.close();
    await c.closed;
    await s.call('GET', '/reset-password?token=secret-reset-token-123');
    await s.call('GET', '/v1/slot/connect/ws?foo=1&TOKEN=another-secret-456&x=2');
    const logged = await until(() => {
      const text = logLines.join('\n');
      return text.includes('another-secret') || text.includes('x=2') ? text : null;
    }, 'the request log lines');
    expect(logged).toContain('/v1/slot/connect/ws?ticket=[redacted]');
    expect(logged).toContain('/reset-password?token=[redacted]');
    expect(logged).toContain('/v1/slot/connect/ws?foo=1&TOKEN=[redacted]&x=2');
    expect(logged).not.toContain(ticket);
    expect(logged).not.toContain('secret-reset-token-123');
    expect(logged).not.toContain('another-secret-456');
  });
});
