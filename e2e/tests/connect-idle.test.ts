import { expect, it } from 'vitest';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { api, buyer, connectHref, waitOnline } from './connect-helpers';

// One idle minute: the warning comes half a minute before the stop (the job looks every 7.5 seconds: an eighth of it).
const t = useServerAndBrowser({ IDLE_STOP_MINUTES: '1' });

it("warns 'Still there?' in the connect tab, keeps the machine on request, then stops it and says why", async () => {
  // Over VNC here; stream-idle.test.ts shows the same warning over WebRTC.
  const b = await buyer(t.browser, t.server.base, 'Idle Tester', 'vnc');
  await api(t.server.base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId });
  await waitOnline(t.server.base, b.token, b.machineId);
  const tab = await b.context.newPage();
  await tab.goto(connectHref(t.server.base, b.machineId, b.machineName));
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 60_000 });
  expect(await tab.getByTestId('transport').innerText()).toBe('VNC');

  const dialog = tab.getByRole('dialog', { name: 'Still there?' });
  await dialog.waitFor({ timeout: 90_000 });
  expect(await dialog.innerText()).toMatch(/It will stop at .+ to save your hours/);
  await snap(tab, 'connect-07-still-there');
  await dialog.getByRole('button', { name: "I'm still here" }).click();
  await dialog.waitFor({ state: 'detached' });

  // Nobody answers the next warning: the machine stops and the tab says why.
  await tab.getByRole('heading', { name: 'This machine was stopped' }).waitFor({ timeout: 150_000 });
  expect(await tab.getByText('Stopped after 1 minute without use.').count()).toBe(1);
  await snap(tab, 'connect-08-stopped-idle');
  await b.context.close();
}, 300_000);
