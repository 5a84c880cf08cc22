/**
 * A CPU profile of this process over one stretch of a bench (`PROFILE=<file>`; no profiler otherwise), and its top
 * functions by self time printed: where a server running in the bench's process spends its CPU.
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/** Starts profiling when PROFILE is set; the returned function stops, writes the file and prints the top `top`. */
export async function profileWhile(label: string, top = 25): Promise<() => Promise<void>> {
  const file = process.env.PROFILE;
  if (!file) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
    session.disconnect();
    writeFileSync(file, JSON.stringify(profile));
    console.log(`\nCPU profile of this process while ${label}: ${file} (open it in Chrome's DevTools); by self time:`);
    for (const line of selfTimes(profile, top)) console.log(`  ${line}`);
    console.log('by area (a package, a module of the server, the engine):');
    for (const line of selfTimes(profile, 12, areaOf)) console.log(`  ${line}`);
  };
}

type Frame = Node['callFrame'];

/** A function as "name  file:line" (the file from node_modules/, server/ or bench/ on). */
function functionOf(f: Frame): string {
  const where = f.url ? `${f.url.replace(/^.*\/(node_modules|server|bench)\//, '$1/')}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'}  ${where}`;
}

/** Where a function lives: a package, a module of the server, WebAssembly, node's own code or the engine. */
function areaOf(f: Frame): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url)?.[1];
  if (pkg) return pkg;
  const mod = /server\/src\/(modules\/[^/]+|[^/]+)/.exec(f.url)?.[1];
  if (mod) return `server/${mod}`;
  if (f.url.startsWith('wasm:') || f.functionName.startsWith('$')) return 'WebAssembly';
  if (f.url.startsWith('node:')) return 'node';
  return f.url ? f.url.replace(/^.*\//, '') : f.functionName || '(engine)';
}

/** The functions (or areas) with the most self time, as "ms  share  name". */
export function selfTimes(profile: Profile, top: number, keyOf: (f: Frame) => string = functionOf): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    const f = byId.get(id)?.callFrame;
    if (!f) return;
    const key = keyOf(f);
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, ms]) => `${ms.toFixed(0).padStart(7)} ms  ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${k}`);
}
