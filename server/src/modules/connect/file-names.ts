/** Longest file name Linux file systems take, in bytes. */
const MAX_NAME_BYTES = 255;

/**
 * The name an uploaded file gets in the desktop: the last segment of what the browser sent (a path like
 * "../../etc/passwd" or "C:\\x\\y.txt" keeps only "passwd" / "y.txt"), without control characters, NFC. Answers null
 * for what cannot be a name ("", ".", ".."); a name too long is shortened, keeping its extension.
 */
export function safeFileName(raw: string): string | null {
  const last = raw.split(/[/\\]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const name = last.normalize('NFC').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (!name || name === '.' || name === '..') return null;
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
  let stem = [...name.slice(0, name.length - ext.length)];
  while (Buffer.byteLength(stem.join('') + ext) > MAX_NAME_BYTES) stem = stem.slice(0, -1);
  return stem.join('') + ext;
}
