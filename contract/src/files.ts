import { z } from 'zod';

/** The largest file one upload may carry (the machine's disk quota may allow less). */
export const MAX_UPLOAD_BYTES = 2 * 1024 ** 3;
/** The largest file a download may carry (the browser keeps it whole before saving it). */
export const MAX_DOWNLOAD_BYTES = 2 * 1024 ** 3;
/** Where uploads land, relative to the desktop user's home. */
export const UPLOADS_FOLDER = 'Uploads';
/** The folder the Files panel opens on. */
export const DOWNLOADS_FOLDER = 'Downloads';
/** At most this many entries of a folder are listed (the rest are counted in `more`). */
export const MAX_LISTED = 1000;

/** A folder of the home, relative to it: '' is the home itself; no '..', no leading '/'. */
export const HomePath = z
  .string()
  .max(1024)
  .refine((p) => p === '' || p.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && !s.includes('\0')), 'Not a folder of the home.');

export const FilesQuery = z.object({ packId: z.string().max(100), path: HomePath.default('') });
export const UploadQuery = z.object({ packId: z.string().max(100), name: z.string().min(1).max(1024) });

export const FileEntry = z.object({
  name: z.string(),
  folder: z.boolean(),
  size: z.number(),
  modifiedAt: z.string(),
});
export type FileEntry = z.infer<typeof FileEntry>;

/** The home's disk: what its files take and its quota (the desktop's own file manager shows the whole pool's). */
export const HomeSpace = z.object({ usedBytes: z.number(), quotaBytes: z.number() });
export type HomeSpace = z.infer<typeof HomeSpace>;

/** What the home may still take. */
export const homeFreeBytes = (s: HomeSpace): number => Math.max(0, s.quotaBytes - s.usedBytes);

/** 1.5 GB, 20 MB, 512 KB: sizes in the messages users read (the server's refusals and the Files panel alike). */
export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${+(n / 1024 ** 3).toFixed(1)} GB`;
  if (n >= 1024 ** 2) return `${+(n / 1024 ** 2).toFixed(1)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} bytes`;
}

export const FolderListing = z.object({
  path: z.string(),
  entries: z.array(FileEntry),
  /** Entries past MAX_LISTED, not listed. */
  more: z.number(),
  /** The home's disk, or null where the machine's provider cannot tell. */
  space: HomeSpace.nullable(),
});
export type FolderListing = z.infer<typeof FolderListing>;

export const UploadAnswer = z.object({
  /** Where the file is now, relative to the home (a name already taken gets " (1)"…). */
  path: z.string(),
  size: z.number(),
});
export type UploadAnswer = z.infer<typeof UploadAnswer>;
