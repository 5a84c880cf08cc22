import type { Readable } from 'node:stream';

/** Why a file operation in a desktop failed; the routes turn each into a clear 4xx. */
export type FilesErrorCode = 'not-found' | 'not-a-folder' | 'not-a-file' | 'permission' | 'quota' | 'incomplete' | 'too-many' | 'io';

export class FilesError extends Error {
  constructor(
    readonly code: FilesErrorCode,
    message: string = code,
  ) {
    super(message);
  }
}

export interface ListedEntry {
  name: string;
  folder: boolean;
  size: number;
  /** Seconds since the epoch. */
  mtime: number;
}

/**
 * Files in a running desktop, read and written AS THE DESKTOP'S USER inside it (uid 1000), so that user's own
 * permissions decide: a link or name the tenant planted leads nowhere that user could not write anyway. Paths are
 * relative to the user's home and already checked by the caller (no '..', no leading '/'); names are one path
 * segment.
 */
export interface DesktopFiles {
  list(machineId: string, dir: string, max: number): Promise<{ entries: ListedEntry[]; more: number }>;
  /**
   * Streams `body` (exactly `size` bytes) into `dir/name`, created if missing; a name already taken gets " (1)"…
   * The file appears only once complete (written beside it, then linked in). Answers where it went.
   */
  upload(machineId: string, f: { dir: string; name: string; size: number; body: Readable }): Promise<{ name: string; size: number }>;
  /** A regular file's bytes as a stream (ended early, with an error, if the file shrank meanwhile). */
  download(machineId: string, path: string): Promise<{ name: string; size: number; body: Readable }>;
  /** What the home's files take and its quota, or null when the provider cannot tell. */
  space(machineId: string): Promise<{ usedBytes: number; quotaBytes: number } | null>;
}
