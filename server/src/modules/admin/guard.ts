import { eq, sql } from 'drizzle-orm';
import { TWO_FACTOR_MESSAGES } from '@hyperdesk/contract';
import type { Db } from '../../db/client';
import { users } from '../../db/schema/index';
import { Forbidden } from '../../errors';
import type { Principal } from '../../lib/principal';

/**
 * Who may use an admin-only call (every /v1/admin route, and any admin route another module adds): a verified id
 * token with the admin claim, and in the database the account still admin and enabled, its generated first password
 * changed, a confirmed authenticator (TOTP), and this sign-in made with it (the token's mfa claim). Each refusal is
 * a 403 with its own code, so the console shows the step that is missing (change the password, enrol, log in again).
 */
export async function requireOperator(db: Db, p: Principal): Promise<void> {
  if (!p.admin) throw new Forbidden('The operator console is for administrators.', 'admin/forbidden');
  const [row] = await db
    .select({
      admin: users.admin,
      disabledAt: users.disabledAt,
      passwordMustChange: users.passwordMustChange,
      totp: sql<boolean>`exists (select 1 from user_totp t where t.user_id = ${users.id} and t.confirmed_at is not null)`,
    })
    .from(users)
    .where(eq(users.id, p.uid));
  if (!row?.admin || row.disabledAt) throw new Forbidden('The operator console is for administrators.', 'admin/forbidden');
  if (row.passwordMustChange) throw step('admin/password-change-required');
  if (!row.totp) throw step('admin/mfa-enrol-required');
  if (!p.mfa) throw step('admin/mfa-required');
}

const step = (code: 'admin/password-change-required' | 'admin/mfa-enrol-required' | 'admin/mfa-required') => new Forbidden(TWO_FACTOR_MESSAGES[code], code);
