/**
 * bench:api's baseline server, in its own process: a bare Fastify handler making ONE query comparable to the balance
 * read (the user's machines joined with a ledger sum) through the product's database client (server/src/db/client:
 * the same pool on PostgreSQL, PGlite in DATA_DIR otherwise). No auth, no hooks, no logging: what a handler that only
 * reads costs on this machine and this database. bench/api.ts bundles it to bench/dist/api-baseline.js and runs it
 * with plain node, like the product's compiled server.
 *
 *   DATABASE_URL=… | DATA_DIR=… BENCH_USER=<uuid> PORT=… node --enable-source-maps bench/dist/api-baseline.js
 */
import Fastify from 'fastify';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../server/src/db/client';

async function main() {
  const user = process.env.BENCH_USER;
  if (!user) throw new Error('BENCH_USER is required');
  const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR });
  const db = database.db;
  const app = Fastify({ logger: false });
  app.get('/bare', async () => {
    const res = await db.execute(sql`select m.id, m.name, m.observed, coalesce(sum(l.minutes), 0)::int as minutes
      from machines m left join ledger_entries l on l.machine_id = m.id where m.owner_user_id = ${user}::uuid group by m.id`);
    return { rows: res.rows };
  });
  await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
  console.log(`baseline listening on ${(app.server.address() as { port: number }).port}`);
  process.on('SIGTERM', () => {
    void app.close().then(() => database.close()).finally(() => process.exit(0));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
