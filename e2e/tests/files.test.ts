import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { expect, it } from 'vitest';
import { lxdProjectFor } from '../../server/src/config';
import { downloadedBytes, snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { api, buyer, connectHref, waitOnline } from './connect-helpers';

// Request logs too: a failure shows what the server answered to the transfers.
const t = useServerAndBrowser({ LOG_LEVEL: 'info' }, { setupTimeout: 900_000, outputChars: 20_000 });

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * A shell command in the machine's desktop as its user (the test's view from the host, as root). On a loaded host
 * `lxc exec` has answered a command's exit without its output (`cat` of a 23-byte file the server had just written
 * read ''; LXD's known "exec randomly returns nothing on fully loaded CPU", canonical/lxd#11422): what the test reads
 * this way it polls (`seen`).
 */
function inDesktop(machineId: string, script: string): string {
  const project = lxdProjectFor(path.resolve(t.server.dataDir));
  return execFileSync('lxc', ['exec', `hd-${machineId}`, '--project', project, '--user', '1000', '--group', '1000', '--env', 'HOME=/home/user', '--cwd', '/home/user', '--', 'bash', '-c', script], {
    encoding: 'utf8',
    timeout: 30_000,
  }).trim();
}
const seen = (machineId: string, script: string) => expect.poll(() => inDesktop(machineId, script), { timeout: 30_000 });

it('a 5 MB file picked in the Files panel has the same sha256 in ~/Uploads; a dropped one lands too; a file made in the desktop downloads with the same sha256', async () => {
  const b = await buyer(t.browser, t.server.base, 'Files Tester', 'vnc');
  await api(t.server.base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId });
  await waitOnline(t.server.base, b.token, b.machineId, 600_000); // a busy host takes its time
  const tab = await b.context.newPage();
  await tab.goto(connectHref(t.server.base, b.machineId, b.machineName));
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 90_000 });

  // Upload: pick a 5 MB file; its progress ends with where it went, and the desktop has the same bytes.
  await tab.getByRole('button', { name: 'Files', exact: true }).click();
  const panel = tab.getByTestId('files-panel');
  await panel.waitFor();
  const data = randomBytes(5 * 1024 * 1024);
  await tab.getByTestId('files-picker').setInputFiles({ name: 'project.zip', mimeType: 'application/zip', buffer: data });
  await panel.getByText('Saved as ~/Uploads/project.zip').waitFor({ timeout: 120_000 });
  await seen(b.machineId, 'sha256sum ~/Uploads/project.zip | cut -c1-64').toBe(sha(data));
  await seen(b.machineId, 'stat -c %U ~/Uploads/project.zip').toBe('user');

  // Drop: files dropped anywhere on the tab go the same way.
  await tab.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['dropped on the desktop\n'], 'notes.txt', { type: 'text/plain' }));
    for (const type of ['dragenter', 'dragover', 'drop']) document.querySelector('[data-testid="desktop"]')!.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await panel.getByText('Saved as ~/Uploads/notes.txt').waitFor({ timeout: 60_000 });
  await seen(b.machineId, 'cat ~/Uploads/notes.txt').toBe('dropped on the desktop');

  // Download: a file made in the desktop's ~/Downloads shows in the panel; a click saves it with the same bytes.
  inDesktop(b.machineId, 'mkdir -p ~/Downloads && head -c 3000000 /dev/urandom > ~/Downloads/handin.bin');
  let made = '';
  await expect.poll(() => (made = inDesktop(b.machineId, 'sha256sum ~/Downloads/handin.bin | cut -c1-64')), { timeout: 30_000 }).toMatch(/^[0-9a-f]{64}$/);
  await panel.getByRole('button', { name: 'Refresh' }).click();
  const entry = panel.getByRole('button', { name: /handin\.bin/ });
  await entry.waitFor({ timeout: 30_000 });
  // The home's disk against its quota (MACHINE_DISK_MB, 20,480 MB by default), which the desktop's file manager cannot show.
  expect(await panel.getByTestId('files-space').innerText()).toMatch(/^Home folder: ([5-9]|\d\d)(\.\d)? MB of 19\.1 GB used, [\d.]+ GB free$/); // the uploads' 5 MB at least
  await snap(tab, 'files-panel');
  const [download] = await Promise.all([tab.waitForEvent('download', { timeout: 120_000 }), entry.click()]).catch(async (err: unknown) => {
    // What the panel said meanwhile (progress, an error) tells a download that never came from one that never left.
    await snap(tab, 'files-download-failed');
    console.log('FILES PANEL\n' + (await panel.innerText().catch((e: Error) => e.message)));
    throw err;
  });
  expect(download.suggestedFilename()).toBe('handin.bin');
  expect(sha(await downloadedBytes(download))).toBe(made);
  await panel.getByText('Downloaded').waitFor();

  // Another folder of the home opens from the panel (Uploads lists what came in).
  await panel.getByRole('button', { name: 'Uploads', exact: true }).click();
  await panel.getByRole('button', { name: /project\.zip/ }).waitFor();
  expect(await panel.getByTestId('files-path').innerText()).toBe('~/Uploads');
  await snap(tab, 'files-panel-uploads');
  await b.context.close();
}, 1_200_000);
