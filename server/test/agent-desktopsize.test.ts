import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

/**
 * The desktop size a tab asks for (server/agent/desktopsize.py), run in Debian's python3 as the agent runs it. The
 * browser tests stream-resize (a window) and connect-touch (a phone held upright) see the desktop take it.
 */
const AGENT = path.join(import.meta.dirname, '../agent');

function fit(sizes: [number, number][]): [number, number][] {
  const out = execFileSync(
    '/usr/bin/python3',
    ['-c', `import sys, json\nsys.path.insert(0, ${JSON.stringify(AGENT)})\nfrom desktopsize import fit\nprint(json.dumps([fit(w, h, 1920, 1080) for w, h in ${JSON.stringify(sizes)}]))`],
    { encoding: 'utf8' },
  );
  return JSON.parse(out) as [number, number][];
}

it('keeps the tab’s shape: as it is within 640×400..1920×1080, scaled down above, scaled up below', () => {
  expect(fit([[1280, 854], [1001, 701], [2400, 1300], [300, 200], [360, 200]])).toEqual([
    [1280, 854],
    [1000, 700], // even numbers
    [1920, 1040],
    [640, 426],
    [720, 400],
  ]);
});

it('gives a phone held upright an upright desktop of its own shape, under the maximum turned upright', () => {
  // 360×695: the video area of a 360×740 phone under the toolbar. It was 640×694 (landscape-ish, shown in a band),
  // then 640×1080 (upright, but under the landscape maximum: bands above and below).
  expect(fit([[360, 695], [1200, 2400], [700, 700]])).toEqual([
    [640, 1234],
    [960, 1920], // scaled down to the upright maximum, 1080×1920
    [700, 700], // square: the landscape maximum
  ]);
});

it('holds a shape no size keeps inside the minimum and the maximum', () => {
  expect(fit([[3000, 500], [200, 3000], [1, 1]])).toEqual([
    [1920, 400],
    [640, 1920],
    [640, 640],
  ]);
});
