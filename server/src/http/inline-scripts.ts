import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The Content-Security-Policy sources of the inline scripts in the built index.html (`'sha256-…'`): the Connect tab's
 * first script is inline (web/vite.config.ts earlyScript) and runs only because its hash is allowed. Read from the
 * file that is served, so the hash always matches it; none when the web app is not built.
 */
export function inlineScriptSources(webDist: string): string[] {
  const file = path.join(webDist, 'index.html');
  return existsSync(file) ? inlineScriptHashes(readFileSync(file, 'utf8')) : [];
}

/** `'sha256-…'` of each inline <script> element's text (scripts with a src are left to `'self'`). */
export function inlineScriptHashes(html: string): string[] {
  const out: string[] = [];
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)) {
    const [, attrs = '', text = ''] = m;
    if (/\bsrc\s*=/i.test(attrs) || !text) continue;
    out.push(`'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`);
  }
  return out;
}
