import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness';
import { openGateway, seedMachine, seedUser, ticketFor, until, type GatewayClient } from './connect-fixtures';
import { lxdDeployment, type LxdDeployment } from './lxd-fixtures';

// A real desktop (an LXD instance: Xvnc + openbox + xterm), reached only through the gateway.
let d: LxdDeployment;
let s: TestServer;
let machineId: string;

beforeAll(async () => {
  d = await lxdDeployment();
  const provider = d.provider;
  s = await startTestServer({ overrides: { machineProvider: provider } });
  const user = await seedUser(s);
  machineId = await seedMachine(s, { ownerId: user.id });
  await provider.start({ machineId, name: 'Desk One' });
  await until(async () => (await provider.describe(machineId)).state === 'running', 'the desktop to run', 240_000);
  const { wsPath } = await ticketFor(s, user.token, machineId);
  client = await openGateway(s, wsPath);
}, 3_600_000); // a fresh machine builds the desktop image first (host-setup.sh)
afterAll(async () => {
  client?.ws.close();
  await s?.close();
  await d?.close();
}, 60_000);

let client: GatewayClient;
let offset = 0;
/** The next n bytes of the RFB stream the browser receives. */
async function read(n: number): Promise<Buffer> {
  await until(() => client.received() >= offset + n, `${n} more bytes from the desktop`, 15_000);
  const b = client.bytes().subarray(offset, offset + n);
  offset += n;
  return b;
}

it('completes an RFB handshake with the real desktop through the WebSocket', async () => {
  expect((await read(12)).toString()).toBe('RFB 003.008\n');
  client.ws.send(Buffer.from('RFB 003.008\n'));

  const count = (await read(1))[0]!;
  expect(count).toBeGreaterThan(0);
  const types = [...(await read(count))];
  expect(types).toContain(1); // None: Xvnc listens on a Unix socket inside the instance, reached through LXD's exec API
  client.ws.send(Buffer.from([1]));
  expect((await read(4)).readUInt32BE(0)).toBe(0); // SecurityResult OK

  client.ws.send(Buffer.from([1])); // ClientInit, shared
  const init = await read(24);
  const width = init.readUInt16BE(0);
  const height = init.readUInt16BE(2);
  expect([width, height]).toEqual([1920, 1080]);
  const name = (await read(init.readUInt32BE(20))).toString();
  expect(name).toContain('Desk One');

  // a full framebuffer update request: the desktop answers with a FramebufferUpdate (message type 0)
  client.ws.send(Buffer.from([3, 0, 0, 0, 0, 0, width >> 8, width & 255, height >> 8, height & 255]));
  const update = await read(4);
  expect(update[0]).toBe(0);
  expect(update.readUInt16BE(2)).toBeGreaterThan(0); // rectangles
});
