import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

/**
 * The streaming agent's frame rate (server/agent/framerate.py), run in Debian's python3 as the agent runs it: 60 fps
 * where the desktop has a core per 640×1024 pixels of its current size, 30 otherwise; the rate control's buffer is
 * 1.5 frame intervals. The browser test stream-resize sees the agent change it when the desktop follows the tab.
 */
const AGENT = path.join(import.meta.dirname, '../agent');

function py(script: string): unknown {
  const out = execFileSync('/usr/bin/python3', ['-c', `import sys, json\nsys.path.insert(0, ${JSON.stringify(AGENT)})\nfrom framerate import fps_for, vbv_ms\n${script}`], {
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

it('60 fps up to 1280×1024 on 2 cores and 1920×1080 from 4; 30 above; never 60 on 0 cores; VBV 1.5 frames', () => {
  const sizes = [
    [1280, 854, 2],
    [1280, 1024, 2],
    [1920, 1080, 2],
    [1920, 1080, 3],
    [1920, 1080, 4],
    [640, 400, 1],
    [1280, 854, 1],
    [1280, 854, 0],
  ];
  expect(py(`print(json.dumps([fps_for(w, h, c) for w, h, c in ${JSON.stringify(sizes)}]))`)).toEqual([60, 60, 30, 30, 60, 60, 30, 30]);
  expect(py('print(json.dumps([vbv_ms(30), vbv_ms(60)]))')).toEqual([50, 25]);
});
