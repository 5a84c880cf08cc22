import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The server's folder (the one holding `package.json` named @hyperdesk/server), found by walking up from this
 * file. The same code runs from the TypeScript source (server/src/lib/) and from the bundle (server/dist/), so run-time
 * files (migrations, the web build, the assets) are located from here, never from a fixed `../..` depth.
 */
export function serverRoot(from = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === '@hyperdesk/server') return dir;
    if (path.dirname(dir) === dir) throw new Error(`no @hyperdesk/server package.json above ${from}`);
  }
}

const ROOT = serverRoot();

/** server/migrations: the numbered SQL files. */
export const MIGRATIONS_DIR = path.join(ROOT, 'migrations');
/** web/dist: the built SPA, beside the server folder. */
export const WEB_DIST = path.resolve(ROOT, '../web/dist');
/** server/assets: files the server sends itself (the favicon, for its own pages and browsers that ask /favicon.ico). */
export const ASSETS_DIR = path.join(ROOT, 'assets');
