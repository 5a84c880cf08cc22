import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { solveChallenge } from 'altcha-lib/v1';
import { startTestServer, type TestServer } from '../../../test/harness';
import { contactMessages, mailOutbox, users } from '../../db/schema/index';
import { CAPTCHA_FAILED, CAPTCHA_REQUIRED, createContactService, escapeHtml } from './service';

const CONTACT_TO = 'sales-desk@example.org';
const SUPPORT_TO = 'help-desk@example.org';

let s: TestServer;
let ipSeq = 0;
/** Each test speaks from its own client address, so the per-IP rate limit only bites where a test wants it. */
const nextIp = () => `203.0.113.${++ipSeq}`;

beforeAll(async () => {
  s = await startTestServer({ env: { CONTACT_TO, SUPPORT_TO, TRUST_PROXY: 'true' } });
});
afterAll(async () => s?.close());

/** Fetches an ALTCHA challenge from the server and solves it like the widget does. */
async function solvedCaptcha(): Promise<string> {
  const ch = (await (await fetch(`${s.base}/v1/captcha/challenge`)).json()) as {
    algorithm: string; challenge: string; salt: string; signature: string; maxnumber?: number;
  };
  const solution = await solveChallenge(ch.challenge, ch.salt, ch.algorithm, ch.maxnumber).promise;
  if (!solution) throw new Error('captcha challenge could not be solved');
  const payload = { algorithm: ch.algorithm, challenge: ch.challenge, number: solution.number, salt: ch.salt, signature: ch.signature, took: solution.took };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

async function post(fields: Record<string, string | undefined>, opts: { ip?: string; token?: string; form?: FormData } = {}) {
  const form = opts.form ?? new FormData();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.append(k, v);
  const headers: Record<string, string> = { 'x-forwarded-for': opts.ip ?? nextIp() };
  if (opts.token) headers.idtoken = opts.token;
  const res = await fetch(`${s.base}/v1/contact`, { method: 'POST', body: form, headers });
  return { status: res.status, body: (await res.json()) as { success: boolean; message: string } };
}

const valid = (over: Record<string, string | undefined> = {}) => ({
  name: 'Ada Lovelace', email: 'ada@example.com', Query: 'Can my class of 12 use the machines on Mondays?', ...over,
});

async function outboxTo(addr: string) {
  return s.app.ctx.db.select().from(mailOutbox).where(eq(mailOutbox.toAddr, addr));
}

describe('POST /v1/contact', () => {
  it('refuses a non-multipart body', async () => {
    const res = await s.call('POST', '/v1/contact', { body: valid(), headers: { 'x-forwarded-for': nextIp() } });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ success: false, message: expect.stringContaining('multipart') });
  });

  it('names each missing field', async () => {
    const captcha = 'unused';
    expect((await post({ ...valid({ name: '  ' }), captcha })).body).toEqual({ success: false, message: 'Please enter your name.' });
    expect((await post({ ...valid({ email: undefined }), captcha })).body.message).toBe('Please enter your e-mail address.');
    expect((await post({ ...valid({ Query: '\n' }), captcha })).body.message).toBe('Please enter your query.');
    const bad = await post({ ...valid({ email: 'not-an-address' }), captcha });
    expect(bad).toEqual({ status: 400, body: { success: false, message: 'Please enter a valid e-mail address.' } });
  });

  it('bounds every field', async () => {
    const captcha = await solvedCaptcha();
    const longName = await post({ ...valid({ name: 'n'.repeat(101) }), captcha });
    expect(longName).toEqual({ status: 400, body: { success: false, message: 'Your name is too long (at most 100 characters).' } });
    const longEmail = await post({ ...valid({ email: `${'e'.repeat(250)}@example.com` }), captcha });
    expect(longEmail.body.message).toBe('Your e-mail address is too long (at most 254 characters).');
    const longQuery = await post({ ...valid({ Query: 'q'.repeat(5001) }), captcha });
    expect(longQuery.body.message).toBe('Your query is too long (at most 5000 characters).');
    // Far beyond the byte limit of the parser: cut off while parsing, still a clean 400.
    const huge = await post({ ...valid({ Query: 'q'.repeat(200_000) }), captcha });
    expect(huge).toEqual({ status: 400, body: { success: false, message: 'Your query is too long (at most 5000 characters).' } });
    // Exactly at the limits is fine (and the captcha was not used up by the refusals above).
    const atLimit = await post({ ...valid({ name: 'n'.repeat(100), Query: 'q'.repeat(5000) }), captcha });
    expect(atLimit.body).toEqual({ success: true, message: "Thanks! We'll get in touch with you on ada@example.com soon." });
  });

  it('accepts no files', async () => {
    const form = new FormData();
    form.append('attachment', new Blob(['hello']), 'a.txt');
    const res = await post({ ...valid(), captcha: 'x' }, { form });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body.success).toBe(false);
  });

  it('requires a captcha, refuses a bad one and a reused one', async () => {
    expect((await post(valid())).body).toEqual({ success: false, message: CAPTCHA_REQUIRED });
    expect((await post({ ...valid(), captcha: Buffer.from('{"number":1}').toString('base64') })).body).toEqual({ success: false, message: CAPTCHA_FAILED });
    const captcha = await solvedCaptcha();
    const first = await post({ ...valid({ email: 'reuse@example.com' }), captcha });
    expect(first.status).toBe(200);
    const again = await post({ ...valid({ email: 'reuse@example.com' }), captcha });
    expect(again).toEqual({ status: 400, body: { success: false, message: CAPTCHA_FAILED } });
    const rows = await s.app.ctx.db.select().from(contactMessages).where(eq(contactMessages.email, 'reuse@example.com'));
    expect(rows).toHaveLength(1);
  });

  it('stores the message and mails CONTACT_TO, or SUPPORT_TO for the FAQ page', async () => {
    const tag = randomUUID();
    const a = await post({ ...valid({ Query: `contact ${tag}` }), captcha: await solvedCaptcha() });
    const b = await post({ ...valid({ Query: `support ${tag}` }), source: 'support', captcha: await solvedCaptcha() });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    const stored = await s.app.ctx.db.select().from(contactMessages);
    expect(stored.find((r) => r.query === `contact ${tag}`)).toMatchObject({ source: 'contact', recipient: CONTACT_TO, userId: null });
    expect(stored.find((r) => r.query === `support ${tag}`)).toMatchObject({ source: 'support', recipient: SUPPORT_TO });
    const sales = (await outboxTo(CONTACT_TO)).filter((m) => m.bodyText.includes(`contact ${tag}`));
    const support = (await outboxTo(SUPPORT_TO)).filter((m) => m.bodyText.includes(`support ${tag}`));
    expect(sales).toHaveLength(1);
    expect(support).toHaveLength(1);
    expect(sales[0]!.subject).toBe('Contact request from Ada Lovelace');
    expect(support[0]!.subject).toBe('Support request from Ada Lovelace');
    expect(sales[0]!.bodyText).toContain('E-mail: ada@example.com');
    expect(sales[0]!.replyTo).toBe('ada@example.com');
  });

  it('escapes HTML in the e-mail and keeps the text body as typed', async () => {
    const evil = `<script>alert("x")</script> & <b onclick='y'>bold</b>`;
    const res = await post({ ...valid({ name: 'Eve <img src=x>', Query: evil }), captcha: await solvedCaptcha() });
    expect(res.status).toBe(200);
    const mail = (await outboxTo(CONTACT_TO)).find((m) => m.bodyText.includes(evil))!;
    expect(mail).toBeDefined();
    expect(mail.bodyHtml).toContain(escapeHtml(evil));
    expect(mail.bodyHtml).toContain('Eve &lt;img src=x&gt;');
    expect(mail.bodyHtml).not.toContain('<script>');
    expect(mail.bodyHtml).not.toContain('<img');
    expect(mail.bodyHtml).not.toContain("<b onclick");
  });

  it('uses the signed-in caller’s name and e-mail', async () => {
    const uid = randomUUID();
    const email = `member-${uid.slice(0, 8)}@example.com`;
    await s.app.ctx.db.insert(users).values({ id: uid, email, displayName: 'Grace Hopper', passwordHash: 'x' });
    const token = await s.app.ctx.tokens.sign({ uid, email, name: 'Grace Hopper', instructor: false, admin: false, emailVerified: false });
    const res = await post({ name: 'Someone Else', email: 'spoof@example.com', Query: 'Signed-in question', captcha: await solvedCaptcha() }, { token });
    expect(res.body).toEqual({ success: true, message: `Thanks! We'll get in touch with you on ${email} soon.` });
    const [row] = await s.app.ctx.db.select().from(contactMessages).where(eq(contactMessages.userId, uid));
    expect(row).toMatchObject({ name: 'Grace Hopper', email, query: 'Signed-in question' });
    // Name and e-mail may be left out entirely when signed in.
    const bare = await post({ Query: 'Second signed-in question', captcha: await solvedCaptcha() }, { token });
    expect(bare.status).toBe(200);
  });

  it('answers 401 for an invalid id token so the client can refresh it', async () => {
    const res = await post({ ...valid(), captcha: 'x' }, { token: 'not-a-token' });
    expect(res.status).toBe(401);
    expect(res.body.success).toBe(false);
  });

  it('stores the message only together with its e-mail (one transaction)', async () => {
    const ctx = s.app.ctx;
    const failing = createContactService({
      db: ctx.db, config: ctx.config, clock: ctx.clock, log: ctx.log,
      captcha: { verify: async () => true },
      mailer: {
        enqueue: async (q, mail) => {
          await ctx.mailer.enqueue(q, mail);
          throw new Error('outbox unavailable');
        },
        flush: async () => 0,
      },
    });
    const query = `atomic ${randomUUID()}`;
    await expect(failing.submit({ ...valid({ Query: query }), captcha: 'ok' }, null)).rejects.toThrow('outbox unavailable');
    const stored = await ctx.db.select().from(contactMessages).where(eq(contactMessages.query, query));
    expect(stored).toHaveLength(0);
    expect((await outboxTo(CONTACT_TO)).filter((m) => m.bodyText.includes(query))).toHaveLength(0);
  });

  it('limits each client address to 5 messages per 10 minutes', async () => {
    const ip = nextIp();
    const other = nextIp();
    for (let i = 0; i < 5; i++) expect((await post({ ...valid(), captcha: '' }, { ip })).status).toBe(400);
    const limited = await fetch(`${s.base}/v1/contact`, { method: 'POST', body: new FormData(), headers: { 'x-forwarded-for': ip } });
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { message: string }).message).toMatch(/Too many requests/);
    expect((await post({ ...valid(), captcha: '' }, { ip: other })).status).toBe(400);
  });
});
