import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from './harness';
import { manualClock } from '../src/lib/clock';
import { createTokens, type Tokens } from '../src/modules/identity/tokens';

/** The id token check remembers tokens it verified (issue 14): a remembered token still expires, and nothing else passes. */
const clock = manualClock(new Date('2030-05-04T10:00:00Z'));
const who = { uid: '00000000-0000-4000-8000-000000000001', email: 'a@example.com', name: 'A', instructor: false, admin: false, emailVerified: true };
let tokens: Tokens;
let drop: () => Promise<void>;

beforeAll(async () => {
  const fresh = await freshDatabase();
  drop = fresh.drop;
  tokens = await createTokens(fresh.database.db, clock);
});
afterAll(async () => drop());

describe('verified token cache', () => {
  it('answers the same claims twice, then refuses the token once it expired', async () => {
    const token = await tokens.sign(who);
    // amr and mfa: how the sign-in was made; issuedAt: when (an enrolment after a 2FA reset needs a later one; 23.2)
    const claims = { ...who, amr: [], mfa: false, issuedAt: Math.floor(clock.now().getTime() / 1000) };
    expect(await tokens.verify(token)).toEqual(claims);
    expect(await tokens.verify(token)).toEqual(claims);
    clock.advance(15 * 60_000 + 1000);
    await expect(tokens.verify(token)).rejects.toMatchObject({ statusCode: 401 });
  });

  it('a remembered token does not vouch for an altered one', async () => {
    const token = await tokens.sign(who);
    await tokens.verify(token);
    const [h, p, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), admin: true })).toString('base64url');
    await expect(tokens.verify(`${h}.${forged}.${sig}`)).rejects.toMatchObject({ statusCode: 401 });
    await expect(tokens.verify(`${token}x`)).rejects.toMatchObject({ statusCode: 401 });
  });

  it('claims handed out cannot be changed by a caller', async () => {
    const token = await tokens.sign(who);
    const p = await tokens.verify(token);
    expect(() => Object.assign(p, { admin: true })).toThrow();
    expect((await tokens.verify(token)).admin).toBe(false);
  });
});
