import { expect, it } from 'vitest';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { machineLog, streamingTab } from './stream-helpers';

// One idle minute: the warning comes half a minute before the stop (the job looks every 7.5 seconds: an eighth of it).
const t = useServerAndBrowser({ IDLE_STOP_MINUTES: '1' });

it("warns 'Still there?' over WebRTC too, and input over the data channel is reported to the gateway as activity", async () => {
  const b = await streamingTab(t.server, t.browser, 'Idle Streamer');
  const { tab } = b;
  // What the tab sends on the gateway socket (the WebRTC input itself goes over the data channel, not here).
  await tab.evaluate(() => {
    const sent: string[] = [];
    (window as unknown as { gatewaySent: string[] }).gatewaySent = sent;
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (this: WebSocket, data: Parameters<WebSocket["send"]>[0]) {
      if (typeof data === 'string') sent.push(data);
      return send.call(this, data);
    };
  });

  const dialog = tab.getByRole('dialog', { name: 'Still there?' });
  await dialog.waitFor({ timeout: 120_000 });
  expect(await dialog.innerText()).toMatch(/It will stop at .+ to save your hours/);
  if ((await tab.getByTestId('transport').innerText()) !== 'WebRTC') console.log(machineLog(t.server, b.machineId, { quiet: true }), t.server.output().slice(-4000));
  expect(await tab.getByTestId('transport').innerText()).toBe('WebRTC');
  await snap(tab, 'stream-idle-still-there');
  await dialog.getByRole('button', { name: "I'm still here" }).click();
  await dialog.waitFor({ state: 'detached' });

  // Typing on the desktop: the keys go over the data channel, and the gateway hears that the user is there.
  await tab.getByTestId('desktop-video').click();
  await tab.keyboard.type('echo still-typing', { delay: 20 });
  await expect
    .poll(() => tab.evaluate(() => (window as unknown as { gatewaySent: string[] }).gatewaySent.filter((m) => m.includes('"type":"activity"')).length))
    .toBeGreaterThan(0);
  await b.context.close();
}, 300_000);
