import { expect, it } from 'vitest';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { machineLog, movePointerInDesktop } from '../desktops';
import { streamingTab, terminalOutput } from './stream-helpers';

const t = useServerAndBrowser();

/** The desktop pointer as `xdotool getmouselocation` prints it inside the machine. */
function pointerOf(text: string): { x: number; y: number } {
  const m = /x:(\d+) y:(\d+)/.exec(text);
  if (!m) throw new Error(`no pointer location in ${JSON.stringify(text)}`);
  return { x: Number(m[1]), y: Number(m[2]) };
}

const agentLog = (machineId: string) => machineLog(t.server, machineId);

/** A shell line that prints 1 while the desktop's button 1 is held, else 0 (XQueryPointer's mask, Button1Mask). */
const BUTTON_1_HELD =
  'python3 -c "from ctypes import *;x=CDLL(\'libX11.so.6\');x.XOpenDisplay.restype=c_void_p;d=c_void_p(x.XOpenDisplay(None));' +
  'm=c_uint();v=c_ulong();i=c_int();x.XQueryPointer(d,c_ulong(x.XDefaultRootWindow(d)),byref(v),byref(v),byref(i),byref(i),' +
  'byref(i),byref(i),byref(m));print(m.value>>8&1)"';

it('pointer lock sends relative motion, blur lets go of held keys, a drag released off the picture lets go of its button, a still desktop sends few frames until its pointer or picture moves, the quality setting reaches the encoder and is remembered', async () => {
  const b = await streamingTab(t.server, t.browser, 'Input Tester');
  const { tab } = b;
  const video = tab.getByTestId('desktop-video');

  // Where the desktop pointer is before the lock (the click on the terminal put it there).
  const before = pointerOf(await terminalOutput(t.server, b, 'xdotool getmouselocation', 'm1.txt'));

  // Lock mouse: the video holds the pointer, and mouse movements arrive as relative motion.
  await tab.getByRole('button', { name: 'Lock mouse' }).click();
  await expect.poll(() => tab.evaluate(() => (document.pointerLockElement as HTMLElement | null)?.dataset.testid ?? null)).toBe('desktop-video');
  const box = (await tab.getByRole('button', { name: 'Lock mouse' }).boundingBox())!;
  const from = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  // Right-drag, as Unreal's mouse look does it: button 3 held while the mouse moves 120 right and 60 down.
  await tab.mouse.down({ button: 'right' });
  for (let i = 1; i <= 12; i++) await tab.mouse.move(from.x + i * 10, from.y + i * 5);
  await tab.mouse.up({ button: 'right' });
  // Still locked: typed without a click (a click would move the pointer), into the terminal that has the focus.
  const after = pointerOf(await terminalOutput(t.server, b, 'xdotool getmouselocation', 'm2.txt', false));
  // The desktop pointer moved by the mouse's motion (X may accelerate it), right and down, from where it was.
  expect(after.x - before.x).toBeGreaterThanOrEqual(100);
  expect(after.y - before.y).toBeGreaterThanOrEqual(50);
  expect(after.x - before.x).toBeGreaterThan(after.y - before.y);
  await tab.evaluate(() => document.exitPointerLock());
  await expect.poll(() => tab.evaluate(() => document.pointerLockElement === null)).toBe(true);

  // Shift held on the desktop, then the focus leaves the video (the key-up never reaches it): nothing stays pressed,
  // so the next line types in lower case.
  await video.focus();
  await tab.keyboard.down('Shift');
  await tab.getByRole('button', { name: 'Stats' }).focus();
  await tab.keyboard.up('Shift');
  expect(await terminalOutput(t.server, b, 'echo lower-case-after-blur', 'k.txt')).toBe('lower-case-after-blur\n');

  // A drag from the terminal that ends over the toolbar: the desktop lets go of the button too (X's pointer state,
  // read in the desktop: 1 while button 1 is held).
  const videoBox = (await video.boundingBox())!;
  await tab.mouse.move(videoBox.x + 110, videoBox.y + 180);
  await tab.mouse.down();
  await tab.mouse.move(videoBox.x + 300, videoBox.y + 200, { steps: 4 });
  const bar = (await tab.getByRole('button', { name: 'Stats' }).boundingBox())!;
  await tab.mouse.move(bar.x - 8, bar.y + bar.height / 2, { steps: 4 });
  await tab.mouse.up();
  expect(await terminalOutput(t.server, b, BUTTON_1_HELD, 'b1.txt', false)).toBe('0\n');

  // A still desktop costs few frames (server/agent/framegate.py): with the demo closed and nothing typed the tab gets
  // four frames a second, not the capture's 30-60; the pointer moving or output in the terminal brings them back.
  expect(await terminalOutput(t.server, b, 'pkill -x glxgears; echo demo closed', 'g.txt', false)).toBe('demo closed\n');
  await tab.getByRole('button', { name: 'Stats' }).click();
  const fps = async () => Number(/fps\s+(\d+)/.exec(await tab.getByTestId('stream-stats').innerText())?.[1] ?? NaN);
  await expect.poll(fps, { timeout: 20_000 }).toBeLessThanOrEqual(6);
  // The pointer moved inside the desktop (no damage, no input from this tab): the frames follow it.
  const moving = movePointerInDesktop(t.server, b.machineId, 6);
  await expect.poll(fps, { timeout: 20_000 }).toBeGreaterThanOrEqual(10);
  await moving;
  await expect.poll(fps, { timeout: 20_000 }).toBeLessThanOrEqual(6);
  await video.focus(); // the Stats button took the focus
  await tab.keyboard.type('for i in $(seq 1 400); do echo $i; sleep 0.02; done\n', { delay: 15 });
  await expect.poll(fps, { timeout: 20_000 }).toBeGreaterThanOrEqual(10);
  await tab.getByRole('button', { name: 'Stats' }).click();

  // Rate control is fed: the agent reads the browser's RTCP receiver reports (packets lost, round trip) from webrtcbin,
  // and Chromium took the TWCC header extension, so its feedback on each packet's arrival tells queueing.
  await expect.poll(() => agentLog(b.machineId), { timeout: 15_000 }).toMatch(/first receiver report: \d+ lost of \d+ sent, rtt \d+ ms/);
  await expect.poll(() => agentLog(b.machineId), { timeout: 15_000 }).toContain('TWCC feedback from the viewer: queueing read from it');
  // Quality: Low caps the encoder at 500 kbit/s, and the tab remembers the choice.
  await tab.getByTestId('video-quality').selectOption('low');
  await expect.poll(() => agentLog(b.machineId), { timeout: 15_000 }).toContain('video bitrate 500 kbit/s (cap 500)');
  await tab.reload();
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 60_000 });
  expect(await tab.getByTestId('video-quality').inputValue()).toBe('low');
  // The viewer the reload replaced held back the frames of the still desktop above in the agent (not only in the tab).
  const heldBack = async () => Number(/frame gate: (\d+) of \d+ grabbed frames held back/.exec(agentLog(b.machineId))?.[1] ?? 0);
  await expect.poll(heldBack, { timeout: 15_000 }).toBeGreaterThan(20);
  await snap(tab, 'stream-input-quality-low');
  await b.context.close();
}, 240_000);
