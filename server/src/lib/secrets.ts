import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { secrets } from '../db/schema/index';

/** Returns the named secret, generating and storing it on first use (safe when several servers race). */
export async function getOrCreateSecret(db: Db, name: string, bytes = 32): Promise<string> {
  await db
    .insert(secrets)
    .values({ name, value: randomBytes(bytes).toString('base64url') })
    .onConflictDoNothing();
  const [row] = await db.select().from(secrets).where(eq(secrets.name, name));
  if (!row) throw new Error(`secret ${name} missing`);
  return row.value;
}
