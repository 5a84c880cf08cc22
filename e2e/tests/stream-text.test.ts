import { expect, it } from 'vitest';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { machineLog, readHome, streamingTab, terminalOutput } from './stream-helpers';

const t = useServerAndBrowser();

it('Ctrl+V pastes the local clipboard into the terminal (WebRTC and VNC), text without key events arrives intact, a stop from another tab shows at once', async () => {
  const b = await streamingTab(t.server, t.browser, 'Text Tester');
  const { tab } = b;
  /**
   * Waits for a file the terminal writes. Its cap is long: on a busy 2-core host the desktop's programs wait for the
   * CPU. A file that never comes leaves the screen and the desktop's log behind (a loaded run once had typed.txt
   * missing, with nothing to tell why).
   */
  const homeFile = async (name: string, want: string) => {
    try {
      await expect.poll(() => readHome(t.server, b.machineId, name), { timeout: 30_000 }).toBe(want);
    } catch (err) {
      await snap(tab, `stream-text-no-${name}`);
      console.error(`${name} did not come; the other files: ${JSON.stringify({ pasted: readHome(t.server, b.machineId, 'pasted.txt') })}\n${machineLog(t.server, b.machineId)}`);
      throw err;
    }
  };
  await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.server.base });
  // The terminal has the keyboard (the line is typed again until it does).
  expect(await terminalOutput(t.server, b, 'echo ready', 'ready.txt')).toBe('ready\n');

  // Ctrl+V: this computer's clipboard becomes the desktop's, then the key reaches xterm, which pastes it. xterm
  // fetches a paste from the selection's owner while later keys go straight in, so nothing is typed after the paste
  // until it has arrived: `cat` takes the pasted line (its newline ends it), then Ctrl+D ends cat.
  await tab.evaluate(() => navigator.clipboard.writeText('pasted from here 42\n'));
  await tab.keyboard.type('cat > pasted.txt\n', { delay: 15 });
  await tab.keyboard.press('Control+V');
  await homeFile('pasted.txt', 'pasted from here 42\n');
  await tab.keyboard.press('Control+D');

  // Text that comes without key events (an IME's, dictation's): each character arrives, whatever the keymap lacks.
  await tab.keyboard.type("echo '", { delay: 15 });
  await tab.keyboard.insertText('café ü € ñ ß');
  await tab.keyboard.type("' > typed.txt\n", { delay: 15 });
  await homeFile('typed.txt', 'café ü € ñ ß\n');
  await snap(tab, 'stream-text-typed');

  // A key held past X's auto-repeat delay (660 ms) repeats only as the browser repeats it: a key-up late on a slow
  // link or a busy host once made X repeat '>' by itself, as '.' (it repeats the bare key, not the Shift tapped with it).
  // The hold is the scenario, not a wait for a state: the driver's key-down sends no repeats.
  await tab.keyboard.type("echo '", { delay: 15 });
  await tab.keyboard.down('>');
  await new Promise((r) => setTimeout(r, 1500));
  await tab.keyboard.up('>');
  await tab.keyboard.type("' > held.txt\n", { delay: 15 });
  await homeFile('held.txt', '>\n');
  // A key the browser repeats (a keydown for each repeat while it is held) repeats in the desktop.
  await tab.keyboard.type("echo '", { delay: 15 });
  for (let i = 0; i < 5; i++) await tab.keyboard.down('x');
  await tab.keyboard.up('x');
  await tab.keyboard.type("' > repeated.txt\n", { delay: 15 });
  await homeFile('repeated.txt', 'xxxxx\n');

  // The same Ctrl+V under VNC (noVNC's canvas gets no paste event: the tab reads the clipboard, which it may here).
  await tab.getByTestId('switch-transport').click();
  await expect.poll(() => tab.getByTestId('transport').innerText()).toBe('VNC');
  await tab.locator('[data-testid="desktop"] canvas').waitFor({ timeout: 30_000 });
  expect(await terminalOutput(t.server, b, 'echo over vnc', 'vnc.txt', false)).toBe('over vnc\n');
  await tab.keyboard.type("echo '", { delay: 15 });
  for (let i = 0; i < 5; i++) await tab.keyboard.down('x');
  await tab.keyboard.up('x');
  await tab.keyboard.type("' > vncrepeated.txt\n", { delay: 15 });
  await homeFile('vncrepeated.txt', 'xxxxx\n');
  await tab.evaluate(() => navigator.clipboard.writeText('pasted over VNC 7\n'));
  await tab.keyboard.type('cat > vncpasted.txt\n', { delay: 15 });
  await tab.keyboard.press('Control+V');
  await homeFile('vncpasted.txt', 'pasted over VNC 7\n');
  await tab.keyboard.press('Control+D');

  // Stopped from the dashboard in another tab: the connect tab says so within seconds, and what to do next.
  await b.page.goto(`${t.server.base}/dashboard`);
  await b.page.getByRole('article').getByRole('button', { name: 'Stop' }).click();
  await tab.getByRole('heading', { name: 'This machine was stopped' }).waitFor({ timeout: 10_000 });
  expect(await tab.getByText('Start it again here or from your dashboard.', { exact: false }).count()).toBe(1);
  await snap(tab, 'stream-text-stopped');
  // Its owner starts it again from the tab, which shows it starting and connects by itself once it is up.
  await tab.getByRole('button', { name: 'Start Machine' }).click();
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 90_000 });
  await b.context.close();
}, 240_000);
