import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingKeys } from '../src/db/schema/index';
import { createTokens } from '../src/modules/identity/tokens';
import { startTestServer, type TestServer } from './harness';

/** Issue 11.6: replicas booting together on an empty database agree on one signing key. */
describe('first signing key', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s.close());

  it('is created once when several servers start at the same time, and each verifies the others’ tokens', async () => {
    const db = s.app.ctx.db;
    for (let round = 0; round < 5; round++) {
      await db.delete(signingKeys);
      const replicas = await Promise.all([0, 1, 2, 3].map(() => createTokens(db, s.app.ctx.clock)));
      expect(await db.select().from(signingKeys)).toHaveLength(1);
      const p = { uid: '00000000-0000-4000-8000-000000000001', email: 'a@example.com', name: 'A', instructor: false, admin: false, emailVerified: true };
      for (const signer of replicas) {
        const token = await signer.sign(p);
        for (const verifier of replicas) await expect(verifier.verify(token)).resolves.toMatchObject({ uid: p.uid });
      }
    }
  });
});
