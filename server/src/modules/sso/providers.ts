import { randomUUID } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import type { SsoButton, SsoProvider, SsoProviderCreate, SsoProviderUpdate } from '@hyperdesk/contract';
import type { Db, Queryable } from '../../db/client';
import { ssoProviders } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { BadRequest, NotFound } from '../../errors';
import type { Principal } from '../identity/tokens';
import { recordAudit } from '../admin/audit';
import type { SecretBox } from './secret-box';
import { discover, issuerUrlAllowed, type ProviderKeys } from './oidc';

export type ProviderRow = typeof ssoProviders.$inferSelect;

/** An issuer as providers publish it: no trailing slash (discovery compares it exactly). */
const issuerOf = (url: string) => url.trim().replace(/\/+$/, '');

export function toSsoProvider(r: ProviderRow): SsoProvider {
  return {
    id: r.id,
    name: r.name,
    issuer: r.issuer,
    clientId: r.clientId,
    domains: r.allowedDomains,
    enabled: r.enabled,
    hasSecret: !!r.clientSecretEnc,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/** What the audit log keeps of a provider: everything but the secret (only whether it changed). */
const audited = (r: ProviderRow) => ({ name: r.name, issuer: r.issuer, clientId: r.clientId, domains: r.allowedDomains, enabled: r.enabled });

export async function findProvider(q: Queryable, id: string): Promise<ProviderRow | undefined> {
  const [row] = await q.select().from(ssoProviders).where(eq(ssoProviders.id, id));
  return row;
}

export async function enabledButtons(q: Queryable): Promise<SsoButton[]> {
  const rows = await q
    .select({ id: ssoProviders.id, name: ssoProviders.name })
    .from(ssoProviders)
    .where(eq(ssoProviders.enabled, true))
    .orderBy(asc(ssoProviders.name), asc(ssoProviders.id));
  return rows;
}

export const keysOf = (r: ProviderRow, box: SecretBox): ProviderKeys => ({
  id: r.id,
  version: r.updatedAt.getTime(),
  issuer: r.issuer,
  clientId: r.clientId,
  clientSecret: box.open(r.clientSecretEnc),
});

/**
 * The console's provider actions; each writes its audit row in the same transaction. An enabled provider is saved
 * only once its discovery document answers for the issuer given, so a typo shows in the form, not at a student's
 * sign-in.
 */
export function createProviderAdmin(deps: { db: Db; clock: Clock; box: SecretBox }) {
  const { db, clock, box } = deps;

  const checkIssuer = async (issuer: string, clientId: string, enabled: boolean) => {
    if (!issuerUrlAllowed(issuer)) throw new BadRequest('The issuer URL must start with https://.', 'sso/issuer-insecure');
    if (!enabled) return;
    try {
      await discover({ issuer, clientId, clientSecret: 'unused' });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new BadRequest(`Could not read the provider's discovery document at ${issuer}/.well-known/openid-configuration (${why.slice(0, 200)}).`, 'sso/discovery-failed');
    }
  };
  const dedupe = (domains: string[]) => [...new Set(domains)];

  return {
    async list(): Promise<SsoProvider[]> {
      const rows = await db.select().from(ssoProviders).orderBy(asc(ssoProviders.createdAt), asc(ssoProviders.id));
      return rows.map(toSsoProvider);
    },

    async create(actor: Principal, input: SsoProviderCreate): Promise<SsoProvider> {
      const issuer = issuerOf(input.issuer);
      await checkIssuer(issuer, input.clientId, input.enabled);
      const now = clock.now();
      return db.transaction(async (tx) => {
        const [row] = await tx
          .insert(ssoProviders)
          .values({
            id: randomUUID(),
            name: input.name,
            issuer,
            clientId: input.clientId,
            clientSecretEnc: box.seal(input.clientSecret),
            allowedDomains: dedupe(input.domains),
            enabled: input.enabled,
            createdAt: now,
            updatedAt: now,
          })
          .returning();
        await recordAudit(tx, actor, { action: 'sso.provider.create', targetType: 'sso-provider', targetId: row!.id, after: audited(row!) }, now);
        return toSsoProvider(row!);
      });
    },

    async update(actor: Principal, id: string, input: SsoProviderUpdate): Promise<SsoProvider> {
      const issuer = issuerOf(input.issuer);
      await checkIssuer(issuer, input.clientId, input.enabled);
      const now = clock.now();
      return db.transaction(async (tx) => {
        const [before] = await tx.select().from(ssoProviders).where(eq(ssoProviders.id, id)).for('update');
        if (!before) throw new NotFound('No such identity provider.');
        const secret = input.clientSecret?.trim() ? input.clientSecret : null;
        const [row] = await tx
          .update(ssoProviders)
          .set({
            name: input.name,
            issuer,
            clientId: input.clientId,
            ...(secret ? { clientSecretEnc: box.seal(secret) } : {}),
            allowedDomains: dedupe(input.domains),
            enabled: input.enabled,
            // Strictly later than before: the cached client of the old version is never used again.
            updatedAt: new Date(Math.max(now.getTime(), before.updatedAt.getTime() + 1)),
          })
          .where(eq(ssoProviders.id, id))
          .returning();
        const action = before.enabled !== input.enabled ? `sso.provider.${input.enabled ? 'enable' : 'disable'}` : 'sso.provider.update';
        await recordAudit(tx, actor, { action, targetType: 'sso-provider', targetId: id, before: audited(before), after: { ...audited(row!), secretChanged: !!secret } }, now);
        return toSsoProvider(row!);
      });
    },

    /** Accounts that signed in through it stay; they sign in with a password reset or another provider. */
    async remove(actor: Principal, id: string): Promise<void> {
      const now = clock.now();
      await db.transaction(async (tx) => {
        const [gone] = await tx.delete(ssoProviders).where(eq(ssoProviders.id, id)).returning();
        if (!gone) throw new NotFound('No such identity provider.');
        await recordAudit(tx, actor, { action: 'sso.provider.delete', targetType: 'sso-provider', targetId: id, before: audited(gone) }, now);
      });
    },
  };
}
