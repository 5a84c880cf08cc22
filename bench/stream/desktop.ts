import { execFileSync } from 'node:child_process';
import type { Page } from 'playwright-core';
import { instanceOf } from '../../server/src/modules/machines/providers/lxd/provider';

/** The bench's desktop: shell scripts in a machine's LXD instance, the scene, and waiting for states. */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The colour patch: an xterm at +200+200, about 530×350 px; its middle, in desktop pixels. */
export const PATCH = { x: 460, y: 390 };

/** Polls `fn` every 250 ms until it answers true; throws after `ms`. */
export async function until(fn: () => Promise<boolean>, what: string, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/**
 * Waits in the tab until the expression is true, checked on every animation frame (the page's CSP forbids
 * waitForFunction's string predicates; an evaluated expression is not subject to it).
 */
export async function waitIn(tab: Page, expr: string, what: string, ms: number): Promise<number> {
  const at = (await tab.evaluate(`new Promise((resolve) => {
    const end = performance.now() + ${ms};
    const check = () => {
      let v = false;
      try { v = ${expr}; } catch { v = false; }
      if (v) resolve(performance.now()); else if (performance.now() > end) resolve(-1); else requestAnimationFrame(check);
    };
    check();
  })`)) as number;
  if (at < 0) throw new Error(`timed out waiting for ${what}`);
  return at;
}

/** A shell script run inside a machine's LXD instance as the desktop's user (a tenant's shell), its output. */
export function asUser(project: string, machineId: string, script: string, input = ''): string {
  return execFileSync(
    'lxc',
    ['exec', instanceOf(machineId), '--project', project, '--user', '1000', '--group', '1000', '--env', 'HOME=/home/user', '--cwd', '/home/user', '--', 'bash', '-c', script],
    { input, timeout: 30_000, encoding: 'utf8' },
  );
}

/**
 * The scene, written into the machine's home folder (as a user could) and started from its xterm; with `busy`
 * busy loops beside it (BUSY, stream/run.ts), stopped with the scene by stopScene.
 */
export function writeScene(project: string, machineId: string, busy = 0) {
  const files: Record<string, string> = {
    'hd-scene.sh': [
      '#!/bin/sh',
      '# bench:stream: a full-screen 3D scene and, on top of it, a colour patch that a key flips (r red, g green, b blue)',
      'cd "$HOME"',
      'LIBGL_ALWAYS_SOFTWARE=1 LP_NUM_THREADS=1 glxgears -fullscreen > gears.log 2>&1 &',
      'sleep 1',
      "xterm -title hd-bench-patch -geometry 48x16+200+200 -fa 'DejaVu Sans Mono' -fs 14 -bg '#0000ff' -fg '#0000ff' -e bash hd-patch.sh &",
      `i=0; while [ $i -lt ${busy} ]; do sh hd-busy.sh & i=$((i+1)); done`,
      '',
    ].join('\n'),
    'hd-busy.sh': 'while :; do :; done\n',
    'hd-patch.sh': [
      "printf '\\033[?25l'",
      'while IFS= read -rsn1 k; do',
      "  case \"$k\" in r) printf '\\033]11;#ff0000\\007';; g) printf '\\033]11;#00ff00\\007';; b) printf '\\033]11;#0000ff\\007';; esac",
      'done',
      '',
    ].join('\n'),
  };
  for (const [name, text] of Object.entries(files)) asUser(project, machineId, `cat > ${name}`, text);
}

/** The scene and its busy loops stopped (the bracket keeps pkill from matching the shell that runs it). */
export function stopScene(project: string, machineId: string) {
  asUser(project, machineId, "pkill -x glxgears; pkill -f 'hd-[b]usy.sh'; true");
}

/**
 * The scene started from a shell outside the desktop's session, at the nice value (10) that what the user starts
 * from the desktop has (machine-image/desktop-session.sh): the same as typed into its xterm.
 */
export function startSceneFromShell(project: string, machineId: string) {
  asUser(project, machineId, 'DISPLAY=:0 XAUTHORITY=/run/hyperdesk/xauth setsid nice -n 10 sh hd-scene.sh > /dev/null 2>&1 < /dev/null &');
}

/** glxgears' own frame rate in the desktop (its "N frames in 5.0 seconds = X FPS" lines), last three reports. */
export function gearsFps(project: string, machineId: string): number {
  try {
    const fps = [...asUser(project, machineId, 'cat gears.log').matchAll(/= ([\d.]+) FPS/g)].map((m) => Number(m[1]));
    const last = fps.slice(-3);
    return last.length ? last.reduce((a, b) => a + b, 0) / last.length : NaN;
  } catch {
    return NaN;
  }
}
