import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';

/**
 * The agent's clipboard reads (server/agent/clipboard.py), in Debian's python3 as the agent runs it, against an `xclip`
 * on PATH that logs each run and takes 50 ms to answer. A tenant can make copies in a loop: each one is an XFixes
 * event that asks for a read, and the reads must stay one at a time, the last copy still reaching the tab.
 */
const AGENT = path.join(import.meta.dirname, '../agent');
const bin = mkdtempSync(path.join(tmpdir(), 'hd-xclip-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

it('a burst of copies makes one read at a time, and the tab gets the last text once', () => {
  const runs = path.join(bin, 'runs.log');
  const text = path.join(bin, 'clipboard.txt');
  writeFileSync(
    path.join(bin, 'xclip'),
    `#!/bin/sh\necho "start $$" >> ${runs}\nsleep 0.05\ncat ${text}\necho "end $$" >> ${runs}\n`,
  );
  chmodSync(path.join(bin, 'xclip'), 0o755);
  const out = execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      `import os, sys, json, time
sys.path.insert(0, ${JSON.stringify(AGENT)})
from clipboard import Clipboard
sent = []
c = Clipboard(lambda t: sent.append(t) or True)
for i in range(200):
    # Replaced whole: the fake xclip must never read a file half written (an empty text, then 'copy n' again).
    with open(${JSON.stringify(text)} + '.new', 'w') as f:
        f.write('copy %d' % i)
    os.replace(${JSON.stringify(text)} + '.new', ${JSON.stringify(text)})
    c.read()
deadline = time.time() + 10
while c.reading and time.time() < deadline:
    time.sleep(0.01)
print(json.dumps({'sent': sent, 'reading': c.reading}))`,
    ],
    { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } },
  );
  const { sent, reading } = JSON.parse(out) as { sent: string[]; reading: boolean };
  expect(reading).toBe(false);
  expect(sent.at(-1)).toBe('copy 199'); // the last copy reaches the tab
  expect(new Set(sent).size).toBe(sent.length); // and nothing is sent twice
  // One xclip at a time (each run ends before the next starts), and far fewer runs than copies.
  const log = execFileSync('cat', [runs], { encoding: 'utf8' }).trim().split('\n');
  for (let i = 0; i < log.length; i += 2) {
    expect(log[i]).toMatch(/^start /);
    expect(log[i + 1]).toBe(log[i]!.replace('start', 'end'));
  }
  expect(log.length / 2).toBeLessThan(20);
});
