import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { createUser } from './identity-helpers';
import { startIdp, type TestIdp } from './oidc-idp';
import { toPrincipal } from '../src/modules/identity/users';
import type { Principal } from '../src/lib/principal';

/** An operator who may open the console (with a confirmed authenticator and a token of a sign-in made with it). */
async function operator(s: TestServer) {
  const a = await createUser(s, { admin: true });
  await s.database.db.execute(sql`insert into user_totp (user_id, secret_enc, confirmed_at) values (${a.row.id}, 'unused', now()) on conflict do nothing`);
  return { ...a, token: await s.app.ctx.tokens.sign({ ...toPrincipal(a.row), amr: ['pwd', 'otp'], mfa: true } as Principal) };
}

/**
 * The console's identity providers (issue 23.1): add, list, edit, disable, delete; the client secret is stored
 * encrypted and never answered; every change is audited; only operators get in.
 */
describe('sso: identity providers in the console', () => {
  let s: TestServer;
  let admin: Awaited<ReturnType<typeof operator>>;
  let idp: TestIdp;
  const SECRET = 'the-school-client-secret-0123456789';
  const body = (o: Record<string, unknown> = {}) => ({ name: 'Springfield High', issuer: idp.issuer, clientId: 'hyperdesk', clientSecret: SECRET, domains: ['springfield.edu', 'Students.Springfield.edu'], enabled: true, ...o });

  beforeAll(async () => {
    s = await startTestServer({ env: { PUBLIC_URL: 'https://desk.example.org' } });
    admin = await operator(s);
    idp = await startIdp({ redirectUri: 'https://desk.example.org/v1/auth/sso/callback' });
  }, 180_000);
  afterAll(async () => {
    await idp?.close();
    await s?.close();
  });

  it('adds a provider: the secret is encrypted at rest and never answered; the audit log has the change without it', async () => {
    const created = await s.call('POST', '/v1/admin/sso/providers', { token: admin.token, body: body({ issuer: `${idp.issuer}/` }) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ name: 'Springfield High', issuer: idp.issuer, clientId: 'hyperdesk', domains: ['springfield.edu', 'students.springfield.edu'], enabled: true, hasSecret: true });
    expect(JSON.stringify(created.body)).not.toContain(SECRET);

    const list = await s.call('GET', '/v1/admin/sso/providers', { token: admin.token });
    expect(list.status).toBe(200);
    expect(list.body.redirectUri).toBe('https://desk.example.org/v1/auth/sso/callback');
    expect(list.body.items.map((p: { id: string }) => p.id)).toContain(created.body.id);
    expect(JSON.stringify(list.body)).not.toContain(SECRET);

    const stored = await s.database.db.execute(sql`select client_secret_enc from sso_providers where id = ${created.body.id}`);
    const enc = (stored.rows[0] as { client_secret_enc: string }).client_secret_enc;
    expect(enc).toMatch(/^v1\./);
    expect(enc).not.toContain(SECRET);
    expect(Buffer.from(enc.split('.')[3]!, 'base64url').toString('utf8')).not.toContain(SECRET);

    const audit = await s.call('GET', `/v1/admin/audit?target=${created.body.id}`, { token: admin.token });
    expect(audit.body.items[0]).toMatchObject({ action: 'sso.provider.create', targetType: 'sso-provider', actor: { email: admin.email } });
    expect(JSON.stringify(audit.body)).not.toContain(SECRET);
  });

  it('edits (an empty secret keeps the stored one), disables and deletes, each audited', async () => {
    const id = (await s.call('POST', '/v1/admin/sso/providers', { token: admin.token, body: body({ name: 'Shelbyville' }) })).body.id as string;
    const encOf = async () => ((await s.database.db.execute(sql`select client_secret_enc from sso_providers where id = ${id}`)).rows[0] as { client_secret_enc: string }).client_secret_enc;
    const before = await encOf();
    const edited = await s.call('PUT', `/v1/admin/sso/providers/${id}`, { token: admin.token, body: body({ name: 'Shelbyville Elementary', clientSecret: '' }) });
    expect(edited.status).toBe(200);
    expect(edited.body.name).toBe('Shelbyville Elementary');
    expect(await encOf()).toBe(before);
    const disabled = await s.call('PUT', `/v1/admin/sso/providers/${id}`, { token: admin.token, body: body({ name: 'Shelbyville Elementary', clientSecret: undefined, enabled: false }) });
    expect(disabled.body.enabled).toBe(false);
    expect((await s.call('GET', '/v1/auth/sso/providers')).body.items.map((p: { id: string }) => p.id)).not.toContain(id);
    expect((await s.call('DELETE', `/v1/admin/sso/providers/${id}`, { token: admin.token })).status).toBe(204);
    expect((await s.call('DELETE', `/v1/admin/sso/providers/${id}`, { token: admin.token })).status).toBe(404);
    expect((await s.call('PUT', `/v1/admin/sso/providers/${id}`, { token: admin.token, body: body() })).status).toBe(404);
    const audit = await s.call('GET', `/v1/admin/audit?target=${id}`, { token: admin.token });
    expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual(['sso.provider.delete', 'sso.provider.disable', 'sso.provider.update', 'sso.provider.create']);
    expect(audit.body.items[2].before.name).toBe('Shelbyville');
    expect(audit.body.items[2].after).toMatchObject({ name: 'Shelbyville Elementary', secretChanged: false });
  });

  it('refuses an issuer without https (other than loopback), one whose discovery fails, and bad domains', async () => {
    const insecure = await s.call('POST', '/v1/admin/sso/providers', { token: admin.token, body: body({ issuer: 'http://idp.example.org' }) });
    expect(insecure.status).toBe(400);
    expect(insecure.body.code).toBe('sso/issuer-insecure');
    const unreachable = await s.call('POST', '/v1/admin/sso/providers', { token: admin.token, body: body({ issuer: `${idp.issuer}/nowhere` }) });
    expect(unreachable.status).toBe(400);
    expect(unreachable.body.code).toBe('sso/discovery-failed');
    expect((await s.call('POST', '/v1/admin/sso/providers', { token: admin.token, body: body({ domains: [] }) })).status).toBe(400);
    expect((await s.call('POST', '/v1/admin/sso/providers', { token: admin.token, body: body({ domains: ['@school.edu'] }) })).status).toBe(400);
    expect((await s.call('POST', '/v1/admin/sso/providers', { token: admin.token, body: body({ clientSecret: '' }) })).status).toBe(400);
  });

  it('is for operators only', async () => {
    const user = await createUser(s);
    expect((await s.call('GET', '/v1/admin/sso/providers', { token: user.token })).status).toBe(403);
    expect((await s.call('POST', '/v1/admin/sso/providers', { token: user.token, body: body() })).status).toBe(403);
    expect((await s.call('GET', '/v1/admin/sso/providers')).status).toBe(401);
  });
});
