import type { FastifyInstance, FastifyRequest } from 'fastify';
import { and, eq, gt, isNull } from 'drizzle-orm';
import { FilesQuery, FolderListing, MAX_DOWNLOAD_BYTES, MAX_LISTED, MAX_UPLOAD_BYTES, UPLOADS_FOLDER, UploadAnswer, UploadQuery, formatBytes, homeFreeBytes } from '@hyperdesk/contract';
import type { z } from 'zod';
import type { Ctx } from '../../context';
import { connectSessions } from '../../db/schema/index';
import { BadRequest, Conflict, HttpError, NotFound } from '../../errors';
import { principalOf } from '../../http/auth';
import { FilesError, type DesktopFiles } from '../machines/providers/desktop-files';
import { canConnect } from './access';
import { ALIVE_STALE_MS } from './sessions';
import { safeFileName } from './file-names';

const LIST_RATE_LIMIT = { max: 120, timeWindow: 60_000 };
const TRANSFER_RATE_LIMIT = { max: 60, timeWindow: 60_000 };

const MAKE_ROOM = 'Delete files in the desktop to make room, then try again.';

/** What a failure in the desktop means to the user. */
function refusal(err: unknown, what: string): unknown {
  if (!(err instanceof FilesError)) return err;
  switch (err.code) {
    case 'quota':
      return new HttpError(413, `The machine's disk is full, so ${what} could not be saved. ${MAKE_ROOM}`, 'disk-full');
    case 'permission':
      return new HttpError(403, `The desktop's user may not use ${what} (permission denied).`, 'permission-denied');
    case 'not-found':
      return new NotFound(`${what} is not in the desktop.`, 'file-not-found');
    case 'not-a-folder':
      return new BadRequest(`${what} is not a folder.`, 'not-a-folder');
    case 'not-a-file':
      return new BadRequest(`${what} is not a file that can be downloaded.`, 'not-a-file');
    case 'too-many':
      return new HttpError(429, 'Four files are already moving to or from this machine; wait for one to finish.', 'too-many-transfers');
    case 'incomplete':
      return new BadRequest(`${what} did not arrive whole; try again.`, 'incomplete');
    default:
      return err;
  }
}

/**
 * Moving files between the user's computer and the desktop (issue 21.4): uploads into ~/Uploads, a folder listing
 * and downloads, all streamed through this server to a process in the desktop that runs as the desktop's user. Only
 * for whoever may connect to the machine (the same check as a ticket: others get a 404), and only while that user
 * has a desktop session open on it.
 */
export async function connectFilesRoutes(v1: FastifyInstance, ctx: Ctx): Promise<void> {
  const files = ctx.machines.provider.files;

  /** The machine the caller is connected to, and the provider's files of it; throws the refusal otherwise. */
  async function reach(req: FastifyRequest, packId: string): Promise<{ machineId: string; files: DesktopFiles }> {
    const principal = principalOf(req);
    const machine = await canConnect(ctx.db, principal, packId);
    if (!machine) throw new NotFound();
    const fresh = new Date(ctx.clock.now().getTime() - ALIVE_STALE_MS);
    const [open] = await ctx.db
      .select({ id: connectSessions.id })
      .from(connectSessions)
      .where(and(eq(connectSessions.machineId, machine.id), eq(connectSessions.userId, principal.uid), isNull(connectSessions.closedAt), gt(connectSessions.aliveAt, fresh)))
      .limit(1);
    if (!open) throw new Conflict('Connect to the desktop first: files move only while it is open in a tab.', 'not-connected');
    if (machine.observed !== 'online') throw new Conflict('Your machine is not running, so its files cannot be reached.', 'machine-offline');
    if (!files) throw new Conflict('Files cannot be moved to or from this kind of machine.', 'files-unsupported');
    return { machineId: machine.id, files };
  }

  await v1.register(async (scope) => {
    // Uploads are read here as a stream, never whole: no parser touches the body (GETs have none).
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

    scope.get('/slot/connect/files', {
      preHandler: scope.authenticate,
      config: { rateLimit: LIST_RATE_LIMIT },
      schema: { tags: ['connect'], summary: "A folder of the connected desktop's home", querystring: FilesQuery, response: { 200: FolderListing } },
    }, async (req) => {
      const q = req.query as z.infer<typeof FilesQuery>;
      const { machineId, files: f } = await reach(req, q.packId);
      const shown = q.path ? `~/${q.path}` : 'Your home folder';
      const [listing, space] = await Promise.all([
        f.list(machineId, q.path, MAX_LISTED).catch((err: unknown) => {
          throw refusal(err, shown);
        }),
        f.space(machineId).catch(() => null),
      ]);
      return {
        path: q.path,
        more: listing.more,
        entries: listing.entries.map((e) => ({ name: e.name, folder: e.folder, size: e.size, modifiedAt: new Date(e.mtime * 1000).toISOString() })),
        space,
      };
    });

    scope.put('/slot/connect/files/upload', {
      preHandler: scope.authenticate,
      config: { rateLimit: TRANSFER_RATE_LIMIT },
      schema: { tags: ['connect'], summary: "Streams the request's body into the connected desktop's ~/Uploads", querystring: UploadQuery, response: { 201: UploadAnswer } },
    }, async (req, reply) => {
      const q = req.query as z.infer<typeof UploadQuery>;
      const name = safeFileName(q.name);
      if (!name) throw new BadRequest('That file name cannot be used in the desktop; rename the file and try again.', 'bad-name');
      const length = req.headers['content-length'];
      if (length === undefined || !/^\d{1,15}$/.test(length)) throw new HttpError(411, 'An upload needs its size (Content-Length).', 'length-required');
      const size = Number(length);
      const shown = `"${name}"`;
      if (size > MAX_UPLOAD_BYTES) throw new HttpError(413, `Files up to ${formatBytes(MAX_UPLOAD_BYTES)} can be uploaded; ${shown} is ${formatBytes(size)}.`, 'too-large');
      const { machineId, files: f } = await reach(req, q.packId);
      const space = await f.space(machineId).catch(() => null);
      const free = space && homeFreeBytes(space);
      if (free !== null && size > free) {
        throw new HttpError(413, `The machine's disk has ${formatBytes(free)} free, too little for ${shown} (${formatBytes(size)}). ${MAKE_ROOM}`, 'disk-full');
      }
      try {
        const saved = await f.upload(machineId, { dir: UPLOADS_FOLDER, name, size, body: req.raw });
        req.log.info({ machineId, size }, 'file uploaded to a desktop');
        return reply.status(201).send({ path: `${UPLOADS_FOLDER}/${saved.name}`, size: saved.size });
      } catch (err) {
        // The rest of the body is read and dropped, so the browser gets to read why instead of a broken connection.
        if (!req.raw.readableEnded) {
          req.raw.resume();
          await new Promise((resolve) => req.raw.once('end', resolve).once('close', resolve));
        }
        throw refusal(err, shown);
      }
    });

    scope.get('/slot/connect/files/download', {
      preHandler: scope.authenticate,
      config: { rateLimit: TRANSFER_RATE_LIMIT },
      schema: { tags: ['connect'], summary: 'A file of the connected desktop, as an attachment', querystring: FilesQuery },
    }, async (req, reply) => {
      const q = req.query as z.infer<typeof FilesQuery>;
      if (!q.path) throw new BadRequest('Name a file to download.', 'not-a-file');
      const { machineId, files: f } = await reach(req, q.packId);
      const shown = `"${q.path.split('/').pop()}"`;
      const file = await f.download(machineId, q.path).catch((err: unknown) => {
        throw refusal(err, shown);
      });
      if (file.size > MAX_DOWNLOAD_BYTES) {
        file.body.destroy();
        throw new HttpError(413, `Files up to ${formatBytes(MAX_DOWNLOAD_BYTES)} can be downloaded; ${shown} is ${formatBytes(file.size)}.`, 'too-large');
      }
      req.log.info({ machineId, size: file.size }, 'file downloaded from a desktop');
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', String(file.size))
        .header('content-disposition', `attachment; filename="${file.name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(file.name)}`)
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff')
        .send(file.body);
    });
  });
}
