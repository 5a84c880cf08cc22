import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { snap } from '../harness';
import { restartAgent } from '../desktops';
import { useServerAndBrowser } from './suite-helpers';
import { streamingTab, terminalOutput } from './stream-helpers';

const t = useServerAndBrowser();

/** Frames the tab's video has decoded so far (the browser's own count). */
const framesDecoded = (tab: Page) =>
  tab.evaluate(() => (document.querySelector('[data-testid="desktop-video"]') as HTMLVideoElement).getVideoPlaybackQuality().totalVideoFrames);

/**
 * The streaming agent's signaling connection closes under a viewer: a crash and restart, or the agent ending a viewer
 * whose picture path keeps failing (server/agent/capturerestart.py). The gateway ends the tab's session as
 * 'desktop unreachable'; a tab that had shown the desktop says the connection was lost and connects again by itself,
 * over WebRTC, with a moving picture and the keyboard working.
 */
it('a tab whose agent went away after streaming says so, connects again by itself and streams and types', async () => {
  const b = await streamingTab(t.server, t.browser, 'Agent Restart');
  const { tab } = b;
  const phases: string[] = [];
  await tab.exposeFunction('notePhase', (p: string) => phases.push(p));
  await tab.evaluate(() => {
    const main = document.querySelector('main[data-phase]')!;
    new MutationObserver(() => (window as unknown as { notePhase: (p: string) => void }).notePhase(main.getAttribute('data-phase') ?? '')).observe(main, { attributes: true, attributeFilter: ['data-phase'] });
  });
  const pid = restartAgent(t.server, b.machineId);
  expect(pid).toMatch(/^\d+$/);
  await expect.poll(() => phases.includes('reconnecting'), { timeout: 20_000 }).toBe(true);
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 60_000 });
  expect(await tab.getByTestId('transport').innerText()).toBe('WebRTC');
  // The new agent's picture moves in the tab (the 3D demo), and keys reach the desktop's terminal through it.
  const at = await framesDecoded(tab);
  await expect.poll(() => framesDecoded(tab), { timeout: 20_000 }).toBeGreaterThan(at + 10);
  expect(await terminalOutput(t.server, b, 'echo after-agent-restart', 'r.txt')).toBe('after-agent-restart\n');
  await snap(tab, 'stream-agent-restart');
  await b.context.close();
}, 240_000);
