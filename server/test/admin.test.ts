import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { SignJWT, generateKeyPair } from 'jose';
import { sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { createUser, sessionCookie, withCookie } from './identity-helpers';
import { machineRow, seedCourseMachines, seedMachine } from './machines-fixtures';
import { seedCourseOrder } from '../src/modules/courses/fixtures/seed';
import { STOPPED_BY_OPERATOR } from '../src/modules/admin/service';
import { rechargeBody } from './commerce-fixtures';

/** Every /v1/admin call with a valid body, so a refusal can only come from the guard. */
const CALLS: [string, string, unknown?][] = [
  ['GET', '/v1/admin/users'],
  ['POST', `/v1/admin/users/${randomUUID()}/claims`, { claim: 'instructor', value: true }],
  ['POST', `/v1/admin/users/${randomUUID()}/disable`],
  ['POST', `/v1/admin/users/${randomUUID()}/enable`],
  ['POST', `/v1/admin/users/${randomUUID()}/revoke-sessions`],
  ['POST', `/v1/admin/users/${randomUUID()}/password-reset`],
  ['GET', '/v1/admin/fleet?state=online'],
  ['POST', `/v1/admin/machines/${randomUUID()}/start`],
  ['POST', `/v1/admin/machines/${randomUUID()}/stop`],
  ['POST', `/v1/admin/machines/${randomUUID()}/force-stop`],
  ['GET', '/v1/admin/orders'],
  ['POST', `/v1/admin/orders/${randomUUID()}/fulfil`],
  ['GET', '/v1/admin/courses'],
  ['GET', '/v1/admin/messages'],
  ['GET', '/v1/admin/adjustments'],
  ['POST', '/v1/admin/adjustments', { machineId: randomUUID(), minutes: 60, reason: 'goodwill' }],
  ['GET', '/v1/admin/audit'],
];

/** An id token with every claim right, signed by a key that is not ours. */
async function forgedToken(uid: string, email: string): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256');
  return new SignJWT({ email, email_verified: true, name: 'Mallory', instructor: true, admin: true })
    .setProtectedHeader({ alg: 'ES256', kid: 'forged', typ: 'JWT' })
    .setSubject(uid)
    .setIssuer('hyperdesk')
    .setAudience('hyperdesk')
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey);
}

/** The same claims with no signature at all (`alg: none`). */
function unsignedToken(uid: string, email: string): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: uid, email, admin: true, iss: 'hyperdesk', aud: 'hyperdesk', iat: now, exp: now + 600 })}.`;
}

describe('operator console API', () => {
  let s: TestServer;
  let admin: Awaited<ReturnType<typeof createUser>>;

  beforeAll(async () => {
    s = await startTestServer();
    admin = await createUser(s, { name: 'Olga Operator', admin: true });
  });
  afterAll(async () => s?.close());

  const as = (token: string) => ({
    get: (path: string) => s.call('GET', path, { token }),
    post: (path: string, body?: unknown) => s.call('POST', path, { token, body: body ?? {} }),
  });

  it('refuses every admin call: 401 without or with a forged token, 403 for a non-admin or a revoked admin', async () => {
    const user = await createUser(s);
    const forged = await forgedToken(user.row.id, user.email);
    // A real token of a user whose admin claim was taken away in the database since it was signed.
    const demoted = await createUser(s, { admin: true });
    await s.database.db.execute(sql`update users set admin = false where id = ${demoted.row.id}`);
    for (const [method, path, body] of CALLS) {
      expect((await s.call(method, path, { body })).status, `${method} ${path} anonymous`).toBe(401);
      expect((await s.call(method, path, { body, token: forged })).status, `${method} ${path} forged`).toBe(401);
      expect((await s.call(method, path, { body, token: unsignedToken(user.row.id, user.email) })).status, `${method} ${path} unsigned`).toBe(401);
      const plain = await s.call(method, path, { body, token: user.token });
      expect(plain.status, `${method} ${path} non-admin`).toBe(403);
      expect(plain.body.code).toBe('admin/forbidden');
      expect((await s.call(method, path, { body, token: demoted.token })).status, `${method} ${path} demoted`).toBe(403);
    }
    // Refusals change nothing: no audit rows but the two operators' own enrolments (createUser enrols admins).
    const audit = await as(admin.token).get('/v1/admin/audit');
    expect(audit.body.items.map((e: { action: string; targetId: string }) => `${e.action} ${e.targetId}`)).toEqual([`user.totp.enable ${demoted.row.id}`, `user.totp.enable ${admin.row.id}`]);
  });

  it('an adjustment with a reason shows in the user\'s balance, the adjustments list and the audit log', async () => {
    const user = await createUser(s, { name: 'Bea Buyer' });
    const machineId = await seedMachine(s.database.db, user.row.id);
    await s.app.ctx.ledger.credit(s.database.db, { machineId, minutes: 600, expiresAt: new Date(Date.now() + 7 * 86_400_000), key: `test:${machineId}` });
    const before = await s.call('GET', '/v1/user/wallet/balance', { token: user.token });
    expect(before.body.balance[0].timeLeft).toBe(10);

    expect((await as(admin.token).post('/v1/admin/adjustments', { machineId, minutes: 90, reason: '' })).status).toBe(400);
    const added = await as(admin.token).post('/v1/admin/adjustments', { machineId, minutes: 90, reason: 'Outage on 2026-11-20' });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ machineId, minutesLeft: 690 });
    const tooMuch = await as(admin.token).post('/v1/admin/adjustments', { machineId, minutes: -1000, reason: 'oops' });
    expect(tooMuch.status).toBe(400);

    const after = await s.call('GET', '/v1/user/wallet/balance', { token: user.token });
    expect(after.body.balance[0].timeLeft).toBe(11.5);

    const list = await as(admin.token).get(`/v1/admin/adjustments?q=${encodeURIComponent(user.email)}`);
    expect(list.body.items).toMatchObject([{ machineId, minutes: 90, reason: 'Outage on 2026-11-20', ownerEmail: user.email }]);
    const fleet = await as(admin.token).get(`/v1/admin/fleet?q=${user.email}`);
    expect(fleet.body.items).toMatchObject([{ id: machineId, minutesLeft: 690, owner: { email: user.email }, desired: 'stopped', observed: 'offline' }]);

    const audit = await as(admin.token).get(`/v1/admin/audit?q=${machineId}`);
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({
      action: 'hours.adjust',
      actor: { uid: admin.row.id, email: admin.email },
      targetType: 'machine',
      targetId: machineId,
      before: { minutesLeft: 600 },
      after: { minutesLeft: 690, minutes: 90, reason: 'Outage on 2026-11-20' },
    });
    const rows = await s.database.db.execute(sql`select kind, minutes, note from ledger_entries where machine_id = ${machineId} order by created_at`);
    expect(rows.rows.map((r) => r.kind)).toEqual(['credit', 'adjustment']);
  });

  it('claims: grant and revoke reach the next token refresh; an admin cannot drop their own admin claim', async () => {
    const user = await createUser(s);
    const granted = await as(admin.token).post(`/v1/admin/users/${user.row.id}/claims`, { claim: 'instructor', value: true });
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({ uid: user.row.id, instructor: true, admin: false });
    const refreshed = await s.call('POST', '/v1/auth/refresh', { headers: withCookie(user.cookie) });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.user.instructor).toBe(true);
    const self = await as(admin.token).post(`/v1/admin/users/${admin.row.id}/claims`, { claim: 'admin', value: false });
    expect(self.status).toBe(409);
    const audit = await as(admin.token).get(`/v1/admin/audit?q=${user.row.id}`);
    expect(audit.body.items[0]).toMatchObject({ action: 'user.claim.instructor.grant', before: { instructor: false }, after: { instructor: true } });
  });

  it('disable ends the sessions, stops the machines and refuses sign-in; enable lets the user back in', async () => {
    const user = await createUser(s, { password: 'secret-123' });
    const single = await seedMachine(s.database.db, user.row.id);
    const course = await seedCourseMachines(s.database.db, user.row.id, 2);
    await s.database.db.execute(sql`update machines set desired = 'running', observed = 'online' where id in (${single}, ${course.ids[0]!})`);

    const res = await as(admin.token).post(`/v1/admin/users/${user.row.id}/disable`);
    expect(res.status).toBe(200);
    expect(res.body.disabledAt).not.toBeNull();
    expect(res.body.activeSessions).toBe(0);
    expect((await machineRow(s.database.db, single)).desired).toBe('stopped');
    expect((await machineRow(s.database.db, course.ids[0]!)).desired).toBe('stopped');
    expect((await s.call('POST', '/v1/auth/refresh', { headers: withCookie(user.cookie) })).status).toBe(401);
    const login = await s.call('POST', '/v1/auth/login', { body: { email: user.email, password: 'secret-123' } });
    expect(login.status).toBe(401);
    expect((await as(admin.token).post(`/v1/admin/users/${admin.row.id}/disable`)).status).toBe(409);

    expect((await as(admin.token).post(`/v1/admin/users/${user.row.id}/enable`)).body.disabledAt).toBeNull();
    const again = await s.call('POST', '/v1/auth/login', { body: { email: user.email, password: 'secret-123' } });
    expect(again.status).toBe(200);
    expect(sessionCookie(again.headers)).toBeTruthy();
    const audit = await as(admin.token).get(`/v1/admin/audit?q=${user.row.id}`);
    expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual(['user.enable', 'user.disable']);
    // The log is searchable by the target user's e-mail too.
    const byEmail = await as(admin.token).get(`/v1/admin/audit?q=${encodeURIComponent(user.email)}`);
    expect(byEmail.body.items.map((e: { targetId: string }) => e.targetId)).toEqual([user.row.id, user.row.id]);
    expect(audit.body.items[1].after).toMatchObject({ disabled: true, sessionsRevoked: 1, machinesStopped: 3 });
  });

  it('revoke sessions and password reset go through the identity module', async () => {
    const user = await createUser(s);
    expect((await as(admin.token).post(`/v1/admin/users/${user.row.id}/revoke-sessions`)).body.activeSessions).toBe(0);
    expect((await s.call('POST', '/v1/auth/refresh', { headers: withCookie(user.cookie) })).status).toBe(401);
    expect((await as(admin.token).post(`/v1/admin/users/${user.row.id}/password-reset`)).status).toBe(200);
    const mail = await s.database.db.execute(sql`select kind, subject from mail_outbox where to_addr = ${user.email}`);
    expect(mail.rows).toHaveLength(1);
    expect(String(mail.rows[0]!.body_text ?? mail.rows[0]!.subject)).toMatch(/password/i);
    expect((await as(admin.token).post(`/v1/admin/users/${randomUUID()}/password-reset`)).status).toBe(404);
  });

  it('fleet: start needs hours, stop and force stop set desired with the operator reason; filters by state', async () => {
    const user = await createUser(s);
    const machineId = await seedMachine(s.database.db, user.row.id);
    expect((await as(admin.token).post(`/v1/admin/machines/${machineId}/start`)).status).toBe(409);
    await s.app.ctx.ledger.credit(s.database.db, { machineId, minutes: 60, expiresAt: new Date(Date.now() + 86_400_000), key: `test:${machineId}` });
    const started = await as(admin.token).post(`/v1/admin/machines/${machineId}/start`);
    expect(started.body).toMatchObject({ desired: 'running', observed: 'processing' });
    const processing = await as(admin.token).get('/v1/admin/fleet?state=processing&limit=100');
    expect(processing.body.items.map((m: { id: string }) => m.id)).toContain(machineId);
    const stopped = await as(admin.token).post(`/v1/admin/machines/${machineId}/stop`);
    expect(stopped.body).toMatchObject({ desired: 'stopped', stopReason: STOPPED_BY_OPERATOR });
    // A stop already asked for, the desktop still up: force stop re-drives it.
    await s.database.db.execute(sql`update machines set observed = 'online', stop_reason = null where id = ${machineId}`);
    const forced = await as(admin.token).post(`/v1/admin/machines/${machineId}/force-stop`);
    expect(forced.body).toMatchObject({ desired: 'stopped', observed: 'online', stopReason: STOPPED_BY_OPERATOR });
    const online = await as(admin.token).get('/v1/admin/fleet?state=online&limit=100');
    expect(online.body.items.every((m: { observed: string }) => m.observed === 'online')).toBe(true);
    const audit = await as(admin.token).get(`/v1/admin/audit?q=${machineId}`);
    expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual(['machine.force-stop', 'machine.stop', 'machine.start']);
    expect((await as(admin.token).post(`/v1/admin/machines/${randomUUID()}/stop`)).status).toBe(404);
  });

  it('re-running fulfilment delivers a paid order whose webhook never came, once', async () => {
    const buyer = await createUser(s);
    const res = await s.call('POST', '/v1/user/wallet/recharge', { token: buyer.token, body: rechargeBody(s, 'uk-unreal-10h') });
    expect(res.status).toBe(200);
    const [order] = (await s.database.db.execute(sql`select id from orders where user_id = ${buyer.row.id}`)).rows as { id: string }[];
    // The provider took the money but its webhook was lost (the built-in provider's session is its own truth).
    await s.database.db.execute(sql`update builtin_checkout_sessions set status = 'paid', completed_at = now() where order_id = ${order!.id}`);
    const listed = await as(admin.token).get(`/v1/admin/orders?q=${buyer.email}`);
    expect(listed.body.items).toMatchObject([{ id: order!.id, status: 'pending', fulfilledAt: null }]);

    const first = await as(admin.token).post(`/v1/admin/orders/${order!.id}/fulfil`);
    expect(first.body).toMatchObject({ status: 'paid', currency: 'GBP', provider: 'builtin' });
    expect(first.body.fulfilledAt).not.toBeNull();
    expect(first.body.machineId).toBeTruthy();
    const second = await as(admin.token).post(`/v1/admin/orders/${order!.id}/fulfil`);
    expect(second.body).toEqual(first.body);
    const credits = await s.database.db.execute(sql`select minutes from ledger_entries where order_id = ${order!.id}`);
    expect(credits.rows.map((r) => Number(r.minutes))).toEqual([600]);
    const audit = await as(admin.token).get(`/v1/admin/audit?q=${order!.id}`);
    expect(audit.body.items.map((e: { before: { status: string }; after: { status: string } }) => [e.before.status, e.after.status])).toEqual([
      ['paid', 'paid'],
      ['pending', 'paid'],
    ]);
  });

  it('orders, courses and messages list what the other modules wrote', async () => {
    const teacher = await createUser(s, { instructor: true });
    const orderId = await seedCourseOrder(s.database.db, { userId: teacher.row.id, vms: 2, hours: 5, startAt: new Date(), expiresAt: new Date(Date.now() + 86_400_000) });
    const orders = await as(admin.token).get(`/v1/admin/orders?q=${teacher.email}&status=paid`);
    expect(orders.body.items).toMatchObject([{ id: orderId, status: 'paid', amountMinor: 1000, currency: 'GBP', provider: 'builtin', fulfilledAt: null }]);
    // No provider session: converge leaves it as it is (idempotent), and the audit says so.
    const again = await as(admin.token).post(`/v1/admin/orders/${orderId}/fulfil`);
    expect(again.status).toBe(200);
    const audit = await as(admin.token).get(`/v1/admin/audit?q=${orderId}`);
    expect(audit.body.items[0]).toMatchObject({ action: 'order.fulfil', before: { status: 'paid' }, after: { status: 'paid' } });

    const { courseId } = await seedCourseMachines(s.database.db, teacher.row.id, 3);
    await s.database.db.execute(sql`insert into roster (course_id, email) values (${courseId}, 'a@example.com'), (${courseId}, 'b@example.com')`);
    const courses = await as(admin.token).get(`/v1/admin/courses?q=${teacher.email}`);
    expect(courses.body.items).toMatchObject([{ id: courseId, vms: 3, rosterSize: 2, seatsInUse: 0, instructor: { email: teacher.email } }]);

    const id = randomUUID();
    await s.database.db.execute(sql`insert into contact_messages (id, name, email, query, source, recipient) values (${id}, 'Vic Visitor', 'vic@example.com', 'Do you ship GPUs?', 'support', 'help@example.com')`);
    await s.app.ctx.mailer.enqueue(s.database.db, { id, to: 'help@example.com', subject: 'Support request', text: 'x', kind: 'contact-support' });
    const messages = await as(admin.token).get('/v1/admin/messages?source=support&q=vic');
    expect(messages.body.items).toMatchObject([{ id, source: 'support', email: 'vic@example.com', delivery: 'outbox', signedIn: false }]);
    expect((await as(admin.token).get('/v1/admin/messages?source=contact&q=vic')).body.items).toEqual([]);
  });

  it('keyset pagination walks every user once, in order, while rows are added behind the cursor', async () => {
    const tag = `page${Date.now().toString(36)}`;
    for (let i = 0; i < 23; i++) await createUser(s, { email: `${tag}-${String(i).padStart(2, '0')}@example.com` });
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const url: string = `/v1/admin/users?q=${tag}&limit=5${after ? `&after=${after}` : ''}`;
      const page = await as(admin.token).get(url);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((u: { email: string }) => u.email));
      after = page.body.next;
      // A row sorting before the cursor appears mid-walk: the following pages neither repeat nor skip.
      if (pages++ === 1) await createUser(s, { email: `${tag}-00a@example.com` });
    } while (after);
    expect(pages).toBe(5);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(23);
    expect((await as(admin.token).get('/v1/admin/users?after=not-a-cursor')).status).toBe(400);
    expect((await as(admin.token).get('/v1/admin/users?limit=1000')).status).toBe(400);

    // Newest-first lists keyed by timestamps with microseconds: the audit log paginates the same way.
    const audit1 = await as(admin.token).get('/v1/admin/audit?limit=2');
    const audit2 = await as(admin.token).get(`/v1/admin/audit?limit=2&after=${audit1.body.next}`);
    const ids = [...audit1.body.items, ...audit2.body.items].map((e: { id: string }) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(4);
  });
});
