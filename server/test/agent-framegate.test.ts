import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

/**
 * The streaming agent's frame gate (server/agent/gaterule.py, framegate.py's rule), run in Debian's python3 as the
 * agent runs it: a grabbed frame goes on to the encoder after a change on the screen until the encoder settles (at
 * most 0.3 s), for a moment after input, and four times a second on a still screen; every other one is held back.
 * The browser test stream-input.test.ts sees it in a desktop (a still screen sends few frames, output brings them back).
 */
const AGENT = path.join(import.meta.dirname, '../agent');

/** Runs `steps` against a fresh rule: each step an action; returns what each 'frame' said. */
function run(steps: Array<[string, number?]>): boolean[] {
  const script = `
import sys, json
sys.path.insert(0, ${JSON.stringify(AGENT)})
from gaterule import GateRule
r = GateRule()
out = []
for kind, arg in json.loads(sys.argv[1]):
    if kind == 'frame': out.append(r.frame(arg))
    elif kind == 'encoded': r.encoded(arg)
    elif kind == 'changed': r.changed()
    elif kind == 'input': r.input(arg)
print(json.dumps(out))
`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, JSON.stringify(steps.map(([k, a]) => [k, a ?? 0]))], { encoding: 'utf8' }));
}

/** Frames at 60 fps from `t0` for `n` frames, each encoded at `size` bytes when let through. */
function frames(t0: number, n: number, size: number): Array<[string, number?]> {
  const steps: Array<[string, number?]> = [];
  for (let i = 0; i < n; i++) steps.push(['frame', t0 + i / 60], ['encoded', size]);
  return steps;
}

it('a new viewer gets frames until the encoder settles, then one frame every quarter of a second on a still screen', () => {
  // Encoded sizes are fed after every frame, let through or not: only let-through ones matter to the test's reading.
  const said = run([...frames(10, 3, 5000), ...frames(10.05, 3, 100), ...frames(10.1, 90, 100)]);
  expect(said.slice(0, 6)).toEqual([true, true, true, true, true, true]);
  // Settled: of the next 90 frames (a second and a half), only the ones a quarter of a second apart go on.
  expect(said.slice(6).filter(Boolean).length).toBe(5);
});

it('a change lets frames through until three in a row encode small, and for at most 0.3 s', () => {
  const settled: Array<[string, number?]> = frames(0, 6, 100);
  const small = run([...settled, ['frame', 0.2], ['changed'], ['frame', 0.21], ['encoded', 9000], ['frame', 0.22], ['encoded', 100], ['frame', 0.23], ['encoded', 100], ['frame', 0.24], ['encoded', 100], ['frame', 0.25]]);
  expect(small.slice(6)).toEqual([false, true, true, true, true, false]);
  // An encoder that goes on sharpening (frames of 0.1-2 KB on a still desktop): 0.3 s of frames, then the still pace.
  const sharpening = run([...settled, ['changed'], ...frames(0.2, 60, 1500)]);
  const passed = sharpening.slice(6).map((ok, i) => (ok ? 0.2 + i / 60 : null)).filter((at) => at !== null);
  expect(passed.slice(0, 18).every((at) => at < 0.5)).toBe(true);
  const still = passed.slice(17);
  expect(still.length).toBe(3);
  still.slice(1).forEach((at, i) => expect(at - still[i]!).toBeGreaterThan(0.24));
});

it('input keeps frames going for a tenth of a second, whatever the screen does', () => {
  const said = run([...frames(0, 6, 100), ['input', 0.3], ['frame', 0.31], ['encoded', 100], ['frame', 0.32], ['encoded', 100], ['frame', 0.33], ['encoded', 100], ['frame', 0.39], ['frame', 0.41], ['frame', 0.45]]);
  expect(said.slice(6)).toEqual([true, true, true, true, false, false]);
});

it('a change that comes while a frame is judged is not lost', () => {
  const said = run([...frames(0, 6, 100), ['changed'], ['changed'], ['frame', 0.2], ['encoded', 100], ['frame', 0.21], ['encoded', 100], ['frame', 0.22], ['encoded', 100], ['frame', 0.23], ['changed'], ['frame', 0.24]]);
  expect(said.slice(6)).toEqual([true, true, true, false, true]);
});
