import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { manualClock } from '../src/lib/clock';
import { MAX_ATTEMPTS } from '../src/modules/mail/service';
import { runAdmin } from '../src/cli/admin';
import { startTestServer, type TestServer } from './harness';
import { createUser, fromIp, randomIp } from './identity-helpers';

/**
 * Issue 23: outgoing mail in the operator console and the CLI. A real SMTP relay on loopback refuses one address
 * for good (550) until told otherwise; the console shows the failure with its reason and the mail's links, and a
 * resend (audited) delivers it once the relay takes it.
 */

/** An SMTP relay that refuses the addresses in `refuse` at RCPT with 550 and keeps what it accepts. */
async function startRelay() {
  const refuse = new Set<string>();
  const received: { to: string[]; raw: string }[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!refuse.has(address.address)) return callback();
      callback(Object.assign(new Error(`5.1.1 <${address.address}>: Recipient address rejected: no such mailbox`), { responseCode: 550 }));
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (raw += d));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.server.address() as { port: number }).port, refuse, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function unusedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Polls until `fn` answers something truthy (a state reached), at most 10 s. */
async function until<T>(fn: () => Promise<T>, what: string): Promise<NonNullable<T>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('outgoing mail in the console', () => {
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let s: TestServer;
  let admin: Awaited<ReturnType<typeof createUser>>;
  const as = (token: string) => ({
    get: (path: string) => s.call('GET', path, { token }),
    post: (path: string) => s.call('POST', path, { token, body: {} }),
  });

  beforeAll(async () => {
    relay = await startRelay();
    s = await startTestServer({ env: { SMTP_URL: `smtp://127.0.0.1:${relay.port}`, PUBLIC_URL: 'https://desk.test', TRUST_PROXY: 'true' } });
    admin = await createUser(s, { name: 'Olga Operator', admin: true });
  });
  afterAll(async () => {
    await s?.close();
    await relay?.close();
  });

  const mailTo = async (to: string) => {
    const res = await as(admin.token).get(`/v1/admin/mail?q=${encodeURIComponent(to)}`);
    expect(res.status).toBe(200);
    return res.body.items as { id: string; to: string; kind: string; state: string; lastError: string | null; links: string[]; sentAt: string | null; failedAt: string | null; resends: number; attempts: number }[];
  };

  it('a mail the relay refuses for good is failed at once, with the reason and its links; a resend delivers it and is audited', async () => {
    const user = await createUser(s, { name: 'Bounced Bob' });
    relay.refuse.add(user.email);
    expect((await s.call('POST', '/v1/auth/forgot', { body: { email: user.email }, headers: fromIp(randomIp()) })).status).toBe(200);
    await s.app.ctx.mailer.flush();

    const [failed] = await mailTo(user.email);
    expect(failed).toMatchObject({ to: user.email, kind: 'password-reset', state: 'failed', attempts: 1, sentAt: null, resends: 0 });
    expect(failed!.lastError).toMatch(/550.*no such mailbox/);
    expect(failed!.failedAt).not.toBeNull();
    expect(failed!.links).toEqual([expect.stringMatching(/^https:\/\/desk\.test\/reset-password\?token=[\w-]+$/)]);
    expect((await as(admin.token).get('/v1/admin/mail?state=failed&limit=100')).body.items.map((m: { id: string }) => m.id)).toContain(failed!.id);
    expect((await as(admin.token).get('/v1/admin/mail?state=sent&limit=100')).body.items.map((m: { id: string }) => m.id)).not.toContain(failed!.id);
    // Failed for good: the mail job does not try it again by itself.
    await s.app.ctx.mailer.flush();
    expect((await mailTo(user.email))[0]).toMatchObject({ state: 'failed', attempts: 1 });

    // The address was fixed at the relay; the operator resends.
    relay.refuse.delete(user.email);
    const resent = await as(admin.token).post(`/v1/admin/mail/${failed!.id}/resend`);
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ id: failed!.id, resends: 1, lastError: null, failedAt: null });
    const sent = await until(async () => (await mailTo(user.email)).find((m) => m.state === 'sent'), 'the resent mail to be sent');
    expect(sent).toMatchObject({ id: failed!.id, resends: 1, attempts: 1 });
    expect(relay.received.filter((m) => m.to.includes(user.email))).toHaveLength(1);

    const audit = await as(admin.token).get(`/v1/admin/audit?action=mail.resend&target=${failed!.id}`);
    expect(audit.body.items).toMatchObject([
      {
        actor: { kind: 'console', email: admin.email },
        targetType: 'mail',
        targetId: failed!.id,
        before: { to: user.email, kind: 'password-reset', state: 'failed', lastError: expect.stringMatching(/550/) },
        after: { state: 'queued', lastError: null, resends: 1 },
      },
    ]);
  });

  it('the CLI lists the same mail with its reason and links, and resends it (audited as the CLI)', async () => {
    const user = await createUser(s, { name: 'Cli Carl' });
    relay.refuse.add(user.email);
    await s.call('POST', '/v1/auth/forgot', { body: { email: user.email }, headers: fromIp(randomIp()) });
    await s.app.ctx.mailer.flush();
    const [failed] = await mailTo(user.email);

    const listed = await runAdmin(['mail', '--state', 'failed', user.email], s.database, { mail: { sends: true } });
    expect(listed[0]).toMatch(/^CREATED\s+STATE\s+KIND\s+TO\s+SENT\s+ID$/);
    expect(listed[1]).toMatch(new RegExp(`^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}  failed \\s+password-reset\\s+${user.email.replace(/[.+]/g, '\\$&')}\\s+-\\s+${failed!.id}$`));
    expect(listed).toContainEqual(expect.stringMatching(/^ {4}failed: .*550.*no such mailbox/));
    expect(listed).toContainEqual(`    link: ${failed!.links[0]}`);
    expect(listed.at(-1)).toBe('1 mail, newest first');

    relay.refuse.delete(user.email);
    const out = await runAdmin(['mail', 'resend', failed!.id], s.database, { actor: { kind: 'cli', osUser: 'dora' }, mail: { sends: true, deliver: () => void s.app.ctx.mailer.flush() } });
    expect(out).toEqual([`Queued password-reset mail ${failed!.id} to ${user.email} again (resend 1); it is being sent now. The audit log has the resend.`]);
    await until(async () => (await mailTo(user.email))[0]?.state === 'sent', 'the mail to be sent');
    const audit = await as(admin.token).get(`/v1/admin/audit?actor=cli:dora&action=mail.resend`);
    expect(audit.body.items).toMatchObject([{ targetId: failed!.id, before: { state: 'failed' } }]);

    // What the console refuses, the CLI refuses too (and changes nothing).
    await expect(runAdmin(['mail', 'resend', failed!.id], s.database, { mail: { sends: false } })).rejects.toThrow(/No SMTP relay is configured/);
    await expect(runAdmin(['mail', 'resend', 'not-an-id'], s.database)).rejects.toThrow(/Usage/);
  });

  it('refuses a resend of a mail waiting for its first try, of an unknown mail, and to non-admins', async () => {
    await s.app.ctx.mailer.enqueue(s.database.db, { to: 'waiting@example.com', subject: 'Hello', text: 'See https://desk.test/x', kind: 'test' });
    const [waiting] = await mailTo('waiting@example.com');
    expect(waiting).toMatchObject({ state: 'queued', attempts: 0, links: ['https://desk.test/x'] });
    expect((await as(admin.token).post(`/v1/admin/mail/${waiting!.id}/resend`)).body).toMatchObject({ statusCode: 409, code: 'admin/mail-queued' });
    expect((await as(admin.token).post('/v1/admin/mail/00000000-0000-4000-8000-000000000000/resend')).status).toBe(404);
    const user = await createUser(s);
    expect((await as(user.token).get('/v1/admin/mail')).status).toBe(403);
    expect((await as(user.token).post(`/v1/admin/mail/${waiting!.id}/resend`)).status).toBe(403);
    expect((await s.call('GET', '/v1/admin/mail')).status).toBe(401);
    expect((await as(admin.token).get('/v1/admin/audit?action=mail.resend&actor=' + encodeURIComponent(user.email))).body.items).toEqual([]);
  });
});

describe('mail that keeps failing, and the outbox without a relay', () => {
  it('a relay that never answers: the mail retries with the reason shown, then fails after the last try', async () => {
    const clock = manualClock(new Date('2030-05-01T08:00:00Z'));
    const s = await startTestServer({ clock, env: { SMTP_URL: `smtp://127.0.0.1:${await unusedPort()}` } });
    cleanups.push(() => s.close());
    const admin = await createUser(s, { admin: true });
    await s.app.ctx.mailer.enqueue(s.database.db, { to: 'far@example.com', subject: 'Hi', text: 'hi', kind: 'test' });
    const state = async () => (await s.call('GET', '/v1/admin/mail?q=far%40example.com', { token: await s.app.ctx.tokens.sign({ uid: admin.row.id, email: admin.email, name: 'A', instructor: false, admin: true, emailVerified: true, amr: ['pwd', 'otp'] }) })).body.items[0];
    for (let i = 1; i <= MAX_ATTEMPTS; i++) {
      await s.app.ctx.mailer.flush();
      const m = await state();
      expect(m.attempts).toBe(i);
      expect(m.lastError).toMatch(/ECONNREFUSED|connect/i);
      expect(m.state).toBe(i < MAX_ATTEMPTS ? 'queued' : 'failed');
      clock.advance(61 * 60_000);
    }
    expect((await state()).nextAttemptAt).toBeNull();
  });

  it('without SMTP_URL every mail is in the outbox, and there is nothing to resend through', async () => {
    const s = await startTestServer();
    cleanups.push(() => s.close());
    const admin = await createUser(s, { admin: true });
    const user = await createUser(s);
    await s.call('POST', '/v1/auth/forgot', { body: { email: user.email } });
    const res = await s.call('GET', `/v1/admin/mail?q=${encodeURIComponent(user.email)}`, { token: admin.token });
    expect(res.body.items).toMatchObject([{ state: 'outbox', attempts: 0, kind: 'password-reset' }]);
    expect(res.body.items[0].sentAt).not.toBeNull();
    const resend = await s.call('POST', `/v1/admin/mail/${res.body.items[0].id}/resend`, { token: admin.token, body: {} });
    expect(resend.body).toMatchObject({ statusCode: 409, code: 'admin/no-smtp' });
  });
});
