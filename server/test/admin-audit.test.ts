import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { createUser } from './identity-helpers';
import { seedMachine } from './machines-fixtures';
import { runAdmin } from '../src/cli/admin';
import { csvField } from '../src/modules/admin/audit';

/** RFC 4180 lines of a CSV body (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  return rows;
}

/**
 * Issue 23: the audit log holds the console's and the CLI's actions (who: the operator's e-mail, or `cli` and the
 * OS user), is filtered by actor, action and target, and exports the filtered entries as CSV.
 */
describe('audit log: CLI actions, filters and CSV', () => {
  let s: TestServer;
  let admin: Awaited<ReturnType<typeof createUser>>;
  let alice: Awaited<ReturnType<typeof createUser>>;
  let bob: Awaited<ReturnType<typeof createUser>>;
  let machineId: string;

  const get = (path: string, token = admin.token) => s.call('GET', path, { token });
  const audit = async (qs: string) => {
    const res = await get(`/v1/admin/audit?limit=100&${qs}`);
    expect(res.status).toBe(200);
    return res.body.items as { action: string; targetId: string; actor: { kind: string; email: string | null; osUser: string | null } }[];
  };

  beforeAll(async () => {
    s = await startTestServer();
    admin = await createUser(s, { name: 'Olga Operator', admin: true });
    alice = await createUser(s, { name: 'Alice Teacher' });
    bob = await createUser(s, { name: 'Bob Buyer' });
    machineId = await seedMachine(s.database.db, bob.row.id);
    await s.app.ctx.ledger.credit(s.database.db, { machineId, minutes: 60, expiresAt: new Date(Date.now() + 86_400_000), key: `test:${machineId}` });

    // The console: grant alice instructor, adjust bob's hours.
    expect((await s.call('POST', `/v1/admin/users/${alice.row.id}/claims`, { token: admin.token, body: { claim: 'instructor', value: true } })).status).toBe(200);
    expect((await s.call('POST', '/v1/admin/adjustments', { token: admin.token, body: { machineId, minutes: 30, reason: 'Goodwill, "sorry", for the outage' } })).status).toBe(200);
    // The CLI, as two OS users: grant bob instructor, revoke alice's, adjust bob's hours, create an admin.
    await runAdmin(['grant', bob.email, 'instructor'], s.database, { actor: { kind: 'cli', osUser: 'carol' } });
    await runAdmin(['revoke', alice.email, 'instructor'], s.database, { actor: { kind: 'cli', osUser: 'root' } });
    await runAdmin(['adjust-hours', machineId, '-15', '=HYPERLINK("x")'], s.database, { actor: { kind: 'cli', osUser: 'carol' } });
    await runAdmin(['create-admin', 'night-ops@example.com', 'Night Ops'], s.database, { actor: { kind: 'cli', osUser: 'root' } });
  });
  afterAll(async () => s?.close());

  it('a CLI grant is in the audit log with who (cli and the OS user), when, the target and before/after', async () => {
    const [entry] = await audit(`action=user.claim.instructor.grant&actor=cli`);
    expect(entry).toMatchObject({
      actor: { kind: 'cli', uid: null, email: null, osUser: 'carol' },
      action: 'user.claim.instructor.grant',
      targetType: 'user',
      targetId: bob.row.id,
      before: { email: bob.email, instructor: false },
      after: { email: bob.email, instructor: true },
    });
    expect(Date.now() - new Date((entry as unknown as { at: string }).at).getTime()).toBeLessThan(60_000);
    const created = await audit('action=user.create-admin');
    expect(created).toMatchObject([{ actor: { kind: 'cli', osUser: 'root' }, after: { email: 'night-ops@example.com', admin: true } }]);
    // A command that changes nothing writes nothing.
    await runAdmin(['grant', bob.email, 'instructor'], s.database, { actor: { kind: 'cli', osUser: 'carol' } });
    expect(await audit(`action=user.claim.instructor.grant&actor=cli`)).toHaveLength(1);
  });

  it('filters by actor, action prefix and target, alone and together', async () => {
    const actions = (items: { action: string }[]) => items.map((e) => e.action);
    // The operator's own enrolment (createUser enrols admins) is theirs too.
    expect(actions(await audit(`actor=${encodeURIComponent(admin.email)}`))).toEqual(['hours.adjust', 'user.claim.instructor.grant', 'user.totp.enable']);
    expect(actions(await audit('actor=cli'))).toEqual(['user.create-admin', 'hours.adjust', 'user.claim.instructor.revoke', 'user.claim.instructor.grant']);
    expect(actions(await audit('actor=cli:root'))).toEqual(['user.create-admin', 'user.claim.instructor.revoke']);
    expect(actions(await audit('action=user.claim'))).toEqual(['user.claim.instructor.revoke', 'user.claim.instructor.grant', 'user.claim.instructor.grant']);
    expect(actions(await audit('action=hours.'))).toEqual(['hours.adjust', 'hours.adjust']);
    // A target: its id, or part of a target user's e-mail.
    expect(actions(await audit(`target=${machineId}`))).toEqual(['hours.adjust', 'hours.adjust']);
    expect((await audit(`target=${encodeURIComponent(alice.email)}`)).map((e) => e.targetId)).toEqual([alice.row.id, alice.row.id]);
    expect(actions(await audit(`target=${encodeURIComponent(alice.email)}&actor=cli`))).toEqual(['user.claim.instructor.revoke']);
    expect(await audit(`target=${machineId}&action=user.`)).toEqual([]);
    // Wildcards are literal text: '%' matches no action.
    expect(await audit('action=%25')).toEqual([]);
  });

  it('exports the filtered entries as CSV, every one, quoted and safe for spreadsheets', async () => {
    const res = await fetch(`${s.base}/v1/admin/audit.csv?target=${machineId}`, { headers: { idtoken: admin.token } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="hyperdesk-audit-\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = parseCsv(await res.text());
    expect(rows[0]).toEqual(['id', 'at', 'actor_kind', 'actor', 'action', 'target_type', 'target_id', 'before', 'after']);
    expect(rows.slice(1).map((r) => [r[2], r[3], r[4], r[6]])).toEqual([
      ['cli', 'cli:carol', 'hours.adjust', machineId],
      ['console', admin.email, 'hours.adjust', machineId],
    ]);
    expect(JSON.parse(rows[2]![8]!)).toEqual({ minutesLeft: 90, minutes: 30, reason: 'Goodwill, "sorry", for the outage' });
    expect(JSON.parse(rows[1]![7]!)).toEqual({ minutesLeft: 90 });
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);

    // Unfiltered: every entry, in the list's order.
    const all = parseCsv(await (await fetch(`${s.base}/v1/admin/audit.csv`, { headers: { idtoken: admin.token } })).text());
    const listed = await audit('');
    expect(all.slice(1).map((r) => r[0])).toEqual(listed.map((e) => (e as unknown as { id: string }).id));
  });

  it('exports a log longer than its read batches whole: every row once, newest first', async () => {
    await s.database.db.execute(sql`insert into admin_audit (actor_kind, actor_os_user, action, target_type, target_id)
      select 'cli', 'bulk', 'bulk.row', 'user', g::text from generate_series(1, 2345) g`);
    const rows = parseCsv(await (await fetch(`${s.base}/v1/admin/audit.csv?action=bulk.`, { headers: { idtoken: admin.token } })).text()).slice(1);
    expect(rows).toHaveLength(2345);
    const ids = rows.map((r) => Number(r[0]));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(rows.map((r) => r[6])).size).toBe(2345);
  });

  it('is for administrators only', async () => {
    expect((await fetch(`${s.base}/v1/admin/audit.csv`)).status).toBe(401);
    expect((await fetch(`${s.base}/v1/admin/audit.csv`, { headers: { idtoken: alice.token } })).status).toBe(403);
    expect((await get('/v1/admin/audit?actor=x', bob.token)).status).toBe(403);
  });
});
