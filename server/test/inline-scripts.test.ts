import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inlineScriptHashes, inlineScriptSources } from '../src/http/inline-scripts';

describe('inline script hashes for the Content-Security-Policy', () => {
  it("answers each inline script's sha256 (as `openssl dgst -sha256 -binary | base64` does) and skips scripts with a src", () => {
    const html = `<head><script type="module" crossorigin src="/assets/index.js"></script>
      <script data-connect="[&quot;/a.js&quot;]">alert(1)</script><SCRIPT>alert(2)</SCRIPT ></head>`;
    expect(inlineScriptHashes(html)).toEqual([
      "'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='",
      "'sha256-4axlHpxgDbFzJObpXPFZgZhULrEGgJiud3OwxN9unHg='",
    ]);
  });

  it('reads the served index.html, and none when the web app is not built', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hd-web-'));
    expect(inlineScriptSources(dir)).toEqual([]);
    writeFileSync(path.join(dir, 'index.html'), '<script>alert(1)</script>');
    expect(inlineScriptSources(dir)).toEqual(["'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"]);
    rmSync(dir, { recursive: true, force: true });
  });
});
