/* global process, console */
// Builds the server to plain JavaScript for `node`: server/dist/main.js (the server) and server/dist/admin.js (the
// operator CLI), one ESM bundle each with a linked source map. Our code and the workspace contract (which ships
// TypeScript) are bundled; every other package stays an import from node_modules (PGlite loads its wasm files and
// pino its worker files relative to their own package folders, so they must not be inlined).
// Files are written to a temporary name and renamed, so concurrent builds (parallel test workers) never leave a
// half-written bundle for a server that starts at that moment.
import { build } from 'esbuild';
import { renameSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SERVER_DIST = path.join(ROOT, 'server/dist');

/** Bare imports stay external, except our own workspace packages (TypeScript sources). */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@hyperdesk/')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

export async function buildServer() {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'server/src/main.ts', admin: 'server/src/cli/admin.ts' },
    outdir: SERVER_DIST,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    plugins: [externalPackages],
    write: false,
    logLevel: 'warning',
  });
  mkdirSync(SERVER_DIST, { recursive: true });
  const tmp = `.tmp-${process.pid}-${Date.now()}`;
  for (const file of result.outputFiles) {
    writeFileSync(file.path + tmp, file.contents);
    renameSync(file.path + tmp, file.path);
  }
  return result.outputFiles.map((f) => path.relative(ROOT, f.path));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now();
  const files = await buildServer();
  console.log(`Built ${files.filter((f) => f.endsWith('.js')).join(', ')} in ${Date.now() - started} ms`);
}
