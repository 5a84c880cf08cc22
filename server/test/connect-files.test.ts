import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPLOAD_BYTES } from '@hyperdesk/contract';
import { FilesError } from '../src/modules/machines/providers/desktop-files';
import { startTestServer, type TestServer } from './harness';
import { lxdDeployment, type LxdDeployment } from './lxd-fixtures';
import { machineRow, openGateway, seedMachine, seedUser, ticketFor, until, type GatewayClient, type SeededUser } from './connect-fixtures';

/**
 * Files in and out of a desktop (issue 21.4) through the real API, on real LXD desktops: the transfers run as the
 * desktop's user inside the instance, and every attack is planted from that user's own shell.
 */
describe('desktop files', () => {
  let d: LxdDeployment;
  let s: TestServer;
  let owner: SeededUser;
  let other: SeededUser;
  let machineId: string;
  let othersMachine: string;
  let session: GatewayClient;
  let keepAlive: ReturnType<typeof setInterval> | undefined;

  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const sh = async (script: string) => (await d.shell(machineId, script)).out.trim();
  /** A command that always prints, asked again while `lxc exec` hands back nothing (the fixture's `said`). */
  const ask = async (script: string) => (await d.said(machineId, script)).out.trim();
  const shaIn = (path: string) => ask(`sha256sum ${path} | cut -c1-64`);
  const list = (token: string, path: string, packId = machineId) => s.call('GET', `/v1/slot/connect/files?packId=${packId}&path=${encodeURIComponent(path)}`, { token });

  /** An upload through real HTTP, with the body streamed (or only announced, with `send: false`). */
  function upload(token: string, name: string, body: Buffer, o: { packId?: string; length?: number; send?: boolean } = {}) {
    const url = new URL(`${s.base}/v1/slot/connect/files/upload?packId=${o.packId ?? machineId}&name=${encodeURIComponent(name)}`);
    return new Promise<{ status: number; body: any }>((resolve, reject) => {
      const headers: Record<string, string> = { idtoken: token, 'content-type': 'application/octet-stream' };
      if (o.length === -1) headers['transfer-encoding'] = 'chunked';
      else headers['content-length'] = String(o.length ?? body.length);
      const req = http.request(url, { method: 'PUT', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') });
          req.destroy();
        });
      });
      req.on('error', reject);
      if (o.send === false) req.flushHeaders();
      else req.end(body);
    });
  }

  async function download(token: string, path: string) {
    const res = await fetch(`${s.base}/v1/slot/connect/files/download?packId=${machineId}&path=${encodeURIComponent(path)}`, { headers: { idtoken: token } });
    const bytes = Buffer.from(await res.arrayBuffer());
    return { status: res.status, bytes, headers: res.headers, json: () => JSON.parse(bytes.toString()) };
  }

  beforeAll(async () => {
    d = await lxdDeployment({ diskMb: 120, memoryMb: 768 });
    s = await startTestServer({ overrides: { machineProvider: d.provider } });
    owner = await seedUser(s);
    other = await seedUser(s);
    machineId = await seedMachine(s, { ownerId: owner.id });
    othersMachine = await seedMachine(s, { ownerId: other.id, observed: 'offline' });
    // A busy host may take longer than one LXD wait to start it: asking again is safe (start is idempotent).
    await until(async () => {
      const state = (await d.provider.describe(machineId)).state;
      if (state === 'stopped') await d.provider.start({ machineId, name: 'Files desk' }).catch(() => undefined);
      return state === 'running';
    }, 'the desktop to run', 600_000);
    await until(async () => (await machineRow(s, machineId)).observed === 'online', 'the machine online', 60_000);
    session = await openGateway(s, (await ticketFor(s, owner.token, machineId)).wsPath);
    // A real RFB handshake (version, no security, shared ClientInit): the desktop keeps an idle viewer open.
    await until(() => session.received() >= 12, 'the desktop to greet', 180_000);
    session.ws.send(Buffer.from('RFB 003.008\n'));
    await until(() => session.received() >= 13, 'the security types', 60_000);
    session.ws.send(Buffer.from([1]));
    await until(() => session.received() >= 13 + session.bytes()[12]! + 4, 'the security result', 60_000);
    session.ws.send(Buffer.from([1]));
    // The tab's pings, and the server's connect-alive job (main.ts runs it; the harness does not) keeping the session counted.
    keepAlive = setInterval(() => {
      session.ws.send(JSON.stringify({ type: 'ping', t: Date.now() }));
      void s.app.ctx.connect.aliveJob.runOnce();
    }, 5_000);
  }, 3_600_000);
  afterAll(async () => {
    clearInterval(keepAlive);
    session?.ws.close();
    await s?.close();
    await d?.close();
  }, 600_000);

  it("another user's machine is a 404 for every call; no token is a 401; no open session is a 409", async () => {
    expect((await list(other.token, 'Downloads')).status).toBe(404);
    expect((await upload(other.token, 'x.txt', Buffer.from('x'))).status).toBe(404);
    expect((await download(other.token, 'Downloads/x')).status).toBe(404);
    expect((await s.call('GET', `/v1/slot/connect/files?packId=${machineId}&path=`)).status).toBe(401);
    const notConnected = await list(other.token, '', othersMachine);
    expect([notConnected.status, notConnected.body.code]).toEqual([409, 'not-connected']);
    expect(await ask('ls ~/Uploads 2>/dev/null | wc -l')).toBe('0');
  });

  it('an upload lands in ~/Uploads with the same sha256; a taken name gets " (1)"; the listing shows both', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const first = await upload(owner.token, 'report.bin', data);
    expect(first).toEqual({ status: 201, body: { path: 'Uploads/report.bin', size: data.length } });
    expect(await shaIn('~/Uploads/report.bin')).toBe(sha(data));
    expect((await upload(owner.token, 'report.bin', Buffer.from('second'))).body.path).toBe('Uploads/report (1).bin');
    const listed = await list(owner.token, 'Uploads');
    expect(listed.status).toBe(200);
    const names = listed.body.entries.map((e: { name: string }) => e.name).sort();
    expect(names).toEqual(['report (1).bin', 'report.bin']); // no part file left behind
    expect(await ask('stat -c %U ~/Uploads/report.bin')).toBe('user');
    // Each upload's file carries its own mark (what names it when LXD loses the answer), on the home's btrfs.
    const marks = await ask(`for f in ~/Uploads/*; do python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "user.hyperdesk.upload").decode())' "$f"; done`);
    expect(marks.split('\n')).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/), expect.stringMatching(/^[0-9a-f]{32}$/)]);
    expect(new Set(marks.split('\n')).size).toBe(2);
    // The home's disk beside the listing, as LXD counts its volume: the quota (diskMb: 120 MB here), and the uploads
    // at once (btrfs counts a write at its commit: an upload ends with a syncfs).
    const { space } = (await list(owner.token, 'Uploads')).body;
    expect(space.quotaBytes).toBe(120e6);
    expect(space.usedBytes).toBeGreaterThanOrEqual(data.length);
    expect(space.usedBytes).toBeLessThan(space.quotaBytes);
  }, 300_000);

  it('a file made in the desktop downloads with the same sha256 and its name', async () => {
    await sh('mkdir -p ~/Downloads && head -c 2500000 /dev/urandom > ~/Downloads/"résumé final.dat"');
    const res = await download(owner.token, 'Downloads/résumé final.dat');
    expect(res.status).toBe(200);
    expect(sha(res.bytes)).toBe(await shaIn('~/Downloads/"résumé final.dat"'));
    expect(res.headers.get('content-disposition')).toContain(`filename*=UTF-8''${encodeURIComponent('résumé final.dat')}`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const missing = await download(owner.token, 'Downloads/nothing.txt');
    expect([missing.status, missing.json().code]).toEqual([404, 'file-not-found']);
  }, 300_000);

  it('refuses a file over the size limit from its announced size alone, and an upload without a size', async () => {
    const big = await upload(owner.token, 'huge.iso', Buffer.alloc(0), { length: MAX_UPLOAD_BYTES + 1, send: false });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 'too-large', message: 'Files up to 2 GB can be uploaded; "huge.iso" is 2 GB.' });
    const chunked = await upload(owner.token, 'x.txt', Buffer.from('abc'), { length: -1 });
    expect([chunked.status, chunked.body.code]).toEqual([411, 'length-required']);
  });

  it('a full disk is a clear message, not a hang, and leaves no partial file', async () => {
    // More than the home's quota: refused from the quota LXD reports, before a byte is sent…
    const tooBig = await upload(owner.token, 'video.mp4', Buffer.alloc(0), { length: 300 * 1024 * 1024, send: false });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.code).toBe('disk-full');
    expect(tooBig.body.message).toMatch(/^The machine's disk has .* free, too little for "video.mp4" \(300 MB\)\. Delete files in the desktop to make room, then try again\.$/);
    try {
      // …and when the disk fills while writing (the quota hit mid-file), the write's error says so.
      // Written until the quota stops it (the home already holds the earlier tests' files, so no fixed size fits).
      const filled = await d.shell(machineId, '{ head -c 300M /dev/zero > ~/filler; } 2>&1; echo done', 120_000);
      expect(filled.out).toContain('Disk quota exceeded');
      const res = await upload(owner.token, 'more.bin', randomBytes(16 * 1024 * 1024));
      expect([res.status, res.body.code]).toEqual([413, 'disk-full']);
      expect(res.body.message).toMatch(/^The machine's disk (is full, so "more\.bin" could not be saved|has .* free, too little for "more\.bin" \(16 MB\))\. Delete files in the desktop to make room, then try again\.$/);
      await expect(d.provider.files!.upload(machineId, { dir: 'Uploads', name: 'direct.bin', size: 16 << 20, body: Readable.from([randomBytes(16 << 20)]) })).rejects.toEqual(new FilesError('quota', 'Disk quota exceeded'));
      expect(await ask('ls -a ~/Uploads')).not.toMatch(/more\.bin|direct\.bin|\.part/);
    } finally {
      await sh('rm -f ~/filler'); // the next tests need room
    }
  }, 600_000);

  it("a planted link or a name with ../ writes nowhere the desktop's user could not, and clobbers nothing", async () => {
    const passwd = await ask('sha256sum /etc/passwd');
    const bashrc = await ask('cat ~/.bashrc | sha256sum');
    // ~/Uploads → /etc: the user may not write there, and the answer says so.
    await sh('mv ~/Uploads ~/Uploads.real && ln -s /etc ~/Uploads');
    const toEtc = await upload(owner.token, 'passwd', Buffer.from('root::0:0::/root:/bin/sh\n'));
    expect([toEtc.status, toEtc.body.code]).toEqual([403, 'permission-denied']);
    expect(await ask('sha256sum /etc/passwd')).toBe(passwd);
    expect(await ask('ls /etc | grep -cx passwd')).toBe('1'); // Debian keeps passwd- beside it
    await sh('rm ~/Uploads && mv ~/Uploads.real ~/Uploads');
    // A link in ~/Uploads under the name being uploaded is not followed: the upload takes the next name.
    await sh('ln -s ~/.bashrc ~/Uploads/notes.txt');
    expect((await upload(owner.token, 'notes.txt', Buffer.from('echo pwned\n'))).body.path).toBe('Uploads/notes (1).txt');
    expect(await ask('cat ~/.bashrc | sha256sum')).toBe(bashrc);
    // A name with a path keeps only its last part; "..", "." and control characters alone are refused.
    expect((await upload(owner.token, '../../.bashrc', Buffer.from('echo pwned\n'))).body.path).toBe('Uploads/.bashrc');
    expect((await upload(owner.token, '..\\..\\evil.txt', Buffer.from('x'))).body.path).toBe('Uploads/evil.txt');
    expect(await ask('cat ~/.bashrc | sha256sum')).toBe(bashrc);
    for (const name of ['..', '.', '\u0001\u0002', 'a/..']) expect(`${name}: ${(await upload(owner.token, name, Buffer.from('x'))).status}`).toBe(`${name}: 400`);
    // Paths that leave the home are refused before the desktop is asked.
    for (const path of ['../../etc/passwd', '/etc/passwd', 'Downloads/../../etc/passwd']) expect(`${path}: ${(await download(owner.token, path)).status}`).toBe(`${path}: 400`);
    expect((await list(owner.token, '../..')).status).toBe(400);
  }, 600_000);

  it("links to what the user cannot read, and FIFOs, are refused at once (no hang)", async () => {
    await sh('mkdir -p ~/Downloads && ln -sf /etc/shadow ~/Downloads/shadow && rm -f ~/Downloads/pipe && mkfifo ~/Downloads/pipe');
    const shadow = await download(owner.token, 'Downloads/shadow');
    expect([shadow.status, shadow.json().code]).toEqual([403, 'permission-denied']);
    const pipe = await download(owner.token, 'Downloads/pipe');
    expect([pipe.status, pipe.json().code]).toEqual([400, 'not-a-file']);
    const folder = await download(owner.token, 'Downloads');
    expect([folder.status, folder.json().code]).toEqual([400, 'not-a-file']);
  }, 300_000);

  it('an upload the browser abandons halfway leaves no file and no process behind', async () => {
    const url = new URL(`${s.base}/v1/slot/connect/files/upload?packId=${machineId}&name=half.bin`);
    const req = http.request(url, { method: 'PUT', headers: { idtoken: owner.token, 'content-length': String(4 << 20) } });
    req.on('error', () => undefined);
    req.write(randomBytes(1 << 20));
    await until(async () => (await sh('ls -a ~/Uploads')).includes('.part'), 'the part file', 120_000);
    req.destroy();
    // "-[c]": a plain "-c" would match the command line of the shell that runs pgrep, so it always found one.
    await until(async () => !(await sh('ls -a ~/Uploads')).includes('.part') && !(await sh('pgrep -f "python3 -I -[c]" || true')), 'the part file and process gone', 120_000);
    expect(await sh('ls ~/Uploads')).not.toContain('half.bin');
  }, 300_000);
});
