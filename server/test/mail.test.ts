import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { eq } from 'drizzle-orm';
import { SMTPServer } from 'smtp-server';
import { mailOutbox } from '../src/db/schema/index';
import { createMailer, smtpTransport } from '../src/modules/mail/service';
import { manualClock } from '../src/lib/clock';
import { startTestServer, type TestServer } from './harness';
import { createUser, fromIp, randomIp } from './identity-helpers';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on 127.0.0.1 (plain, no auth) that records every message it accepts. */
async function startSmtp(port = 0): Promise<{ port: number; received: Received[]; next(): Promise<Received>; close(): Promise<void> }> {
  const received: Received[] = [];
  const waiting: ((m: Received) => void)[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const m = { from: String(session.envelope.mailFrom && session.envelope.mailFrom.address), to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') };
        received.push(m);
        waiting.shift()?.(m);
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.server.address() as { port: number }).port,
    received,
    next: () => new Promise<Received>((resolve) => waiting.push(resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function unusedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Undoes quoted-printable (soft line breaks and =XX escapes) so the link can be read from the raw message. */
const decodeQp = (s: string) => s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function server(env: Record<string, string>, clock = manualClock(new Date('2030-05-01T08:00:00Z'))): Promise<TestServer> {
  const s = await startTestServer({ clock, env: { TRUST_PROXY: 'true', ...env } });
  cleanups.push(() => s.close());
  return s;
}

describe('mail over SMTP', () => {
  it('delivers the reset e-mail with its link to a real SMTP server, and the link works', async () => {
    const smtp = await startSmtp();
    cleanups.push(() => smtp.close());
    const s = await server({ SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM: 'Hyperdesk <no-reply@desk.test>', PUBLIC_URL: 'https://desk.test' });
    expect(s.app.ctx.jobs.map((j) => j.name)).toContain('mail');
    const u = await createUser(s, { name: 'Hedy Lamarr' });
    const arrived = smtp.next();
    expect((await s.call('POST', '/v1/auth/forgot', { body: { email: u.email }, headers: fromIp(randomIp()) })).body).toEqual({ ok: true });
    const mail = await arrived;
    expect(mail.from).toBe('no-reply@desk.test');
    expect(mail.to).toEqual([u.email]);
    expect(mail.raw).toMatch(/^Subject: Reset your Hyperdesk password\r?$/m);
    const text = decodeQp(mail.raw);
    const token = /https:\/\/desk\.test\/reset-password\?token=([\w-]+)/.exec(text)![1]!;

    await s.app.ctx.mailer.idle();
    const [row] = await s.database.db.select().from(mailOutbox).where(eq(mailOutbox.toAddr, u.email));
    expect(row).toMatchObject({ attempts: 1, lastError: null, kind: 'password-reset' });
    expect(row!.sentAt).toEqual(s.app.ctx.clock.now());
    expect(await s.app.ctx.mailer.flush()).toBe(0); // sent rows are not sent again

    const res = await s.call('POST', '/v1/auth/reset', { body: { token, password: 'via-smtp-1' } });
    expect(res.status).toBe(200);
    expect((await s.call('POST', '/v1/auth/login', { body: { email: u.email, password: 'via-smtp-1' } })).status).toBe(200);
  });

  it('records failures, waits before retrying, then delivers', async () => {
    const port = await unusedPort();
    const clock = manualClock(new Date('2030-05-01T08:00:00Z'));
    const s = await server({ SMTP_URL: `smtp://127.0.0.1:${port}` }, clock);
    const u = await createUser(s);
    await s.call('POST', '/v1/auth/forgot', { body: { email: u.email }, headers: fromIp(randomIp()) });
    await s.app.ctx.mailer.idle();
    const row = async () => (await s.database.db.select().from(mailOutbox).where(eq(mailOutbox.toAddr, u.email)))[0]!;
    const failed = await row();
    expect(failed).toMatchObject({ attempts: 1, sentAt: null, claimedUntil: null });
    expect(failed.lastError).toMatch(/ECONNREFUSED|connect/i);
    expect(failed.nextAttemptAt).toEqual(new Date(clock.now().getTime() + 60_000));

    expect(await s.app.ctx.mailer.flush()).toBe(0); // not due yet: nothing tried
    expect((await row()).attempts).toBe(1);

    const smtp = await startSmtp(port);
    cleanups.push(() => smtp.close());
    clock.advance(61_000);
    expect(await s.app.ctx.mailer.flush()).toBe(1);
    expect(smtp.received).toHaveLength(1);
    expect(await row()).toMatchObject({ attempts: 2, lastError: null, sentAt: clock.now() });
  });

  it('sends each pending row once even when flushes overlap, also from a second server', async () => {
    const smtp = await startSmtp();
    cleanups.push(() => smtp.close());
    const s = await server({ SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
    const { mailer, db, clock, log } = s.app.ctx;
    const other = createMailer({ database: s.database, clock, log, from: 'other@desk.test', transport: smtpTransport(`smtp://127.0.0.1:${smtp.port}`) });
    for (let i = 0; i < 25; i++) await mailer.enqueue(db, { to: `many-${i}@example.com`, subject: `n${i}`, text: 'hello', kind: 'test' });
    const counts = await Promise.all([mailer.flush(), other.flush(), mailer.flush(), other.flush()]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(25);
    expect(smtp.received).toHaveLength(25);
    expect(new Set(smtp.received.map((m) => m.to[0])).size).toBe(25);
  });
});

describe('mail outbox (no SMTP_URL)', () => {
  it('keeps the row as the delivery and runs no mail job', async () => {
    const s = await server({});
    expect(s.app.ctx.jobs.map((j) => j.name)).not.toContain('mail');
    const { mailer, db } = s.app.ctx;
    await mailer.enqueue(db, { to: 'outbox@example.com', subject: 'Hi', text: 'plain', html: '<p>plain</p>', kind: 'test' });
    const [row] = await db.select().from(mailOutbox).where(eq(mailOutbox.toAddr, 'outbox@example.com'));
    expect(row).toMatchObject({ subject: 'Hi', bodyText: 'plain', bodyHtml: '<p>plain</p>', kind: 'test', attempts: 0 });
    expect(row!.sentAt).not.toBeNull();
    expect(await mailer.flush()).toBe(0);
  });

  it('records a mail only when the surrounding transaction commits', async () => {
    const s = await server({});
    const { mailer, db } = s.app.ctx;
    await expect(
      db.transaction(async (tx) => {
        await mailer.enqueue(tx, { to: 'rolled-back@example.com', subject: 'x', text: 'x', kind: 'test' });
        throw new Error('change failed');
      }),
    ).rejects.toThrow('change failed');
    expect(await db.select().from(mailOutbox).where(eq(mailOutbox.toAddr, 'rolled-back@example.com'))).toEqual([]);
  });
});
