import { build, defineConfig, type Plugin } from 'vite';
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
 * The Connect tab's first script (src/early/main.ts), inline in index.html's head, after the charset and before the
 * stylesheets (a classic script after a stylesheet waits for it to load): it runs while the page is parsed and dials
 * the desktop before any of the app's code has come over the link (as a file of its own it waited for a fetch that
 * shared a slow link with the app's scripts). Built on its own, as one classic script; the server allows it by its
 * hash (server/src/http/inline-scripts.ts). It preloads the Connect page's files, named on the tag. The dev server
 * loads it as a module instead.
 */
function earlyScript(): Plugin {
  const source = 'src/early/main.ts';
  let root = '';
  return {
    name: 'hyperdesk-early-script',
    configResolved(c) {
      root = c.root;
    },
    transformIndexHtml: {
      order: 'post',
      async handler(html, ctx) {
        if (!ctx.bundle) return [{ tag: 'script', attrs: { type: 'module', src: `/${source}` }, injectTo: 'head' }];
        const code = await buildEarly(path.resolve(root, source));
        const files = JSON.stringify(connectFiles(ctx.bundle)).replace(/"/g, '&quot;');
        // Right after the charset, ahead of the stylesheets: a classic script after a stylesheet waits for it to load.
        const charset = html.match(/<meta charset="[^"]*"\s*\/?>/i);
        if (!charset || charset.index === undefined) throw new Error('index.html needs <meta charset> for the first script to follow');
        const at = charset.index + charset[0].length;
        return `${html.slice(0, at)}\n    <script data-connect="${files}">${code}</script>${html.slice(at)}`;
      },
    },
  };
}

/** src/early/main.ts and what it imports as one minified classic script, safe to put inside a <script> element. */
async function buildEarly(entry: string): Promise<string> {
  const out = await build({
    configFile: false,
    logLevel: 'silent',
    build: { write: false, minify: true, target: 'es2020', lib: { entry, formats: ['iife'], name: 'hyperdeskEarly' } },
  });
  const chunk = (Array.isArray(out) ? out[0] : out) as { output: { type: string; code?: string }[] };
  const code = chunk.output.find((o) => o.type === 'chunk')?.code ?? '';
  return code.trim().replace(/<\/(script)/gi, '<\\/$1');
}

type Bundle = Record<string, { type: string; isEntry?: boolean; facadeModuleId?: string | null; imports?: string[]; viteMetadata?: { importedCss: Set<string> } }>;

/**
 * The built Connect page's script and the scripts it imports that index.html does not preload already, then their
 * stylesheets (the Connect tab preloads the scripts; the dashboard prefetches all: lib/prefetchConnect.ts).
 */
function connectFiles(bundle: Bundle): string[] {
  const chunks = Object.entries(bundle).filter(([, c]) => c.type === 'chunk');
  const page = chunks.find(([, c]) => c.facadeModuleId?.endsWith('/src/pages/Connect/index.tsx'))?.[0];
  const app = chunks.filter(([, c]) => c.isEntry).map(([name]) => name);
  const preloaded = withImports(bundle, app);
  const scripts = [...withImports(bundle, page ? [page] : [])].filter((f) => !preloaded.has(f));
  const css = new Set(scripts.flatMap((f) => [...(bundle[f]?.viteMetadata?.importedCss ?? [])]));
  return [...scripts, ...css].map((f) => `/${f}`);
}

function withImports(bundle: Bundle, names: string[]): Set<string> {
  const files = new Set<string>();
  const walk = (name: string) => {
    if (files.has(name) || bundle[name]?.type !== 'chunk') return;
    files.add(name);
    bundle[name].imports?.forEach(walk);
  };
  names.forEach(walk);
  return files;
}

export default defineConfig({
  plugins: [react(), precompress(), earlyScript()],
  server: { proxy: { '/v1': { target: 'http://localhost:3000', ws: true }, '/.well-known': 'http://localhost:3000' } },
  build: { target: 'es2022', sourcemap: false, reportCompressedSize: false },
});
