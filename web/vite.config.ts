import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** Writes .br and .gz next to every text asset so the server sends them pre-compressed (no CPU per request). */
function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'hyperdesk-precompress',
    apply: 'build',
    configResolved(c) {
      outDir = path.resolve(c.root, c.build.outDir);
    },
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((f) => {
          const p = path.join(dir, f);
          return statSync(p).isDirectory() ? walk(p) : [p];
        });
      for (const file of walk(outDir)) {
        if (!/\.(js|mjs|css|html|svg|json|txt)$/.test(file)) continue;
        const body = readFileSync(file);
        if (body.length < 1024) continue;
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
        writeFileSync(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

/**
 * The Connect tab's first script (src/early/main.ts) is an entry of its own, placed before the app's in index.html:
 * it runs as soon as the page is parsed and dials the desktop while the app's code is still loading.
 */
function earlyEntry(): Plugin {
  const source = 'src/early/main.ts';
  return {
    name: 'hyperdesk-early-entry',
    config: () => ({ build: { rollupOptions: { input: { index: 'index.html', early: source } } } }),
    transformIndexHtml: {
      order: 'post',
      handler(_html, ctx) {
        const chunk = Object.values(ctx.bundle ?? {}).find((c) => c.type === 'chunk' && c.isEntry && c.name === 'early');
        if (!chunk || chunk.type !== 'chunk') return [{ tag: 'script', attrs: { type: 'module', src: `/${source}` }, injectTo: 'head-prepend' }];
        // Its imports (and theirs) are fetched beside it, not one round trip after another.
        const deps = new Set<string>();
        const walk = (names: string[]) => {
          for (const f of names) {
            const c = ctx.bundle?.[f];
            if (deps.has(f) || c?.type !== 'chunk') continue;
            deps.add(f);
            walk(c.imports);
          }
        };
        walk(chunk.imports);
        const preloads = [...deps].map((f) => ({ tag: 'link', attrs: { rel: 'modulepreload', crossorigin: true, href: `/${f}` }, injectTo: 'head-prepend' as const }));
        return [{ tag: 'script', attrs: { type: 'module', crossorigin: true, src: `/${chunk.fileName}` }, injectTo: 'head-prepend' }, ...preloads];
      },
    },
  };
}

export default defineConfig({
  plugins: [react(), precompress(), earlyEntry()],
  server: { proxy: { '/v1': { target: 'http://localhost:3000', ws: true }, '/.well-known': 'http://localhost:3000' } },
  build: { target: 'es2022', sourcemap: false, reportCompressedSize: false },
});
