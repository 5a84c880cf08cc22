/**
 * Runs a benchmark on PostgreSQL (when DATABASE_URL is set) and then on the embedded PGlite, and ends the process:
 * 0 when both ran, 1 with the error otherwise.
 */
export function runOnEachDatabase(bench: (db: string) => Promise<void>): void {
  const main = async () => {
    if (process.env.DATABASE_URL) await bench('postgres');
    else console.log('DATABASE_URL unset: PostgreSQL skipped');
    delete process.env.DATABASE_URL;
    await bench('pglite');
  };
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
