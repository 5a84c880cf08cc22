import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH, snap, startServer, type RunningServer } from '../harness';
import { api, buyer, canvasColours, connectHref, waitOnline } from './connect-helpers';
import { machineLog, videoSize } from './stream-helpers';

/** The tab's media timeout (MEDIA_TIMEOUT_MS in web/src/pages/Connect/desktop.ts). */
const MEDIA_TIMEOUT_MS = 5_000;
/** A render and a busy machine's scheduling on top of the timer. */
const SLACK_MS = 750;

let server: RunningServer;
let browser: Browser;
beforeAll(async () => {
  // A browser whose WebRTC may not use UDP except through a proxy, and none is set: it sends no UDP at all.
  // (--force-webrtc-ip-handling-policy has no effect in this Chromium; this switch does.)
  const udpBlocked = [...CHROMIUM_ARGS, '--webrtc-ip-handling-policy=disable_non_proxied_udp'];
  [server, browser] = await Promise.all([
    startServer(),
    chromium.launch({ executablePath: CHROMIUM_PATH, args: udpBlocked }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it('falls back to VNC by itself within 5 s of the offer when UDP is blocked, and shows the desktop', async () => {
  const b = await buyer(browser, server.base, 'No UDP', 'webrtc');
  await api(server.base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId });
  await waitOnline(server.base, b.token, b.machineId);
  await b.context.addInitScript(() => {
    // Without UDP the browser still reaches the agent over ICE-TCP on this host (it did, in this test's first
    // version); a firewall that blocks UDP usually blocks the agent's TCP ports too, so the tab drops those
    // candidates here: no path is left, as behind such a firewall without a TURN relay.
    type Add = (this: RTCPeerConnection, c?: RTCIceCandidateInit | null) => Promise<void>;
    const add = RTCPeerConnection.prototype.addIceCandidate as Add;
    RTCPeerConnection.prototype.addIceCandidate = function (this: RTCPeerConnection, c?: RTCIceCandidateInit | null) {
      if (c?.candidate && / tcp /i.test(c.candidate)) return Promise.resolve();
      return add.call(this, c);
    } as Add as typeof RTCPeerConnection.prototype.addIceCandidate;
    // The moment the agent's offer reaches the tab, and the moment the toolbar says VNC, in the tab's own clock.
    const w = window as unknown as { offerAt?: number; vncAt?: number };
    // The offer is set as the remote description as soon as it arrives.
    const setRemote = RTCPeerConnection.prototype.setRemoteDescription as (this: RTCPeerConnection, d: RTCSessionDescriptionInit) => Promise<void>;
    RTCPeerConnection.prototype.setRemoteDescription = function (this: RTCPeerConnection, d: RTCSessionDescriptionInit) {
      if (d.type === 'offer') w.offerAt ??= performance.now();
      return setRemote.call(this, d);
    } as typeof RTCPeerConnection.prototype.setRemoteDescription;
    new MutationObserver(() => {
      if (w.vncAt === undefined && document.querySelector('[data-testid="transport"]')?.textContent === 'VNC') w.vncAt = performance.now();
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  const tab = await b.context.newPage();
  await tab.goto(connectHref(server.base, b.machineId, b.machineName));
  expect(await tab.getByTestId('transport').innerText()).toBe('WebRTC');
  await expect.poll(() => tab.getByTestId('transport').innerText(), { timeout: 30_000 }).toBe('VNC').catch(async (err) => {
    await snap(tab, 'stream-fallback-none');
    console.log(await tab.locator('main').getAttribute('data-phase'), server.output().slice(-3000));
    throw err;
  });
  const { offerAt, vncAt } = await tab.evaluate(() => {
    const w = window as unknown as { offerAt?: number; vncAt?: number };
    return { offerAt: w.offerAt, vncAt: w.vncAt };
  });
  expect(offerAt).toBeTypeOf('number');
  expect(vncAt! - offerAt!).toBeLessThanOrEqual(MEDIA_TIMEOUT_MS + SLACK_MS);
  console.log(`fallback: VNC ${Math.round(vncAt! - offerAt!)} ms after the offer`);

  // The VNC session shows the desktop.
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 60_000 }).catch(async (err) => {
    await snap(tab, 'stream-fallback-failed');
    console.log(server.output().slice(-3000));
    throw err;
  });
  await tab.locator('[data-testid="desktop"] canvas').waitFor();
  await expect.poll(() => canvasColours(tab), { timeout: 30_000 }).toBeGreaterThan(3);
  await snap(tab, 'stream-fallback-vnc');
  await b.context.close();
}, 240_000);

it('without UDP but with TCP, the tab reaches the desktop over ICE-TCP once the agent stops holding its TCP candidates', async () => {
  const b = await buyer(browser, server.base, 'TCP Only', 'webrtc');
  await api(server.base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId });
  await waitOnline(server.base, b.token, b.machineId);
  const tab = await b.context.newPage();
  await tab.goto(connectHref(server.base, b.machineId, b.machineName));
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 60_000 }).catch(async (err) => {
    await snap(tab, 'stream-tcp-failed');
    console.log(machineLog(server, b.machineId), server.output().slice(-3000));
    throw err;
  });
  // Still WebRTC (no fallback to VNC), on the agent's TCP candidate, which it sent once UDP had not connected.
  expect(await tab.getByTestId('transport').innerText()).toBe('WebRTC');
  await tab.getByRole('button', { name: 'Stats' }).click();
  await expect.poll(() => tab.getByTestId('stream-stats').innerText(), { timeout: 15_000 }).toMatch(/path\s+tcp /);
  await expect.poll(() => machineLog(server, b.machineId), { timeout: 10_000 }).toMatch(/ICE-TCP candidates sent \([1-9]\d*\): UDP not connected/);
  await expect.poll(() => videoSize(tab), { timeout: 30_000 }).not.toBe('0x0');
  await snap(tab, 'stream-tcp');
  await b.context.close();
}, 240_000);
