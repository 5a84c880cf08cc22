import { useId, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { DOWNLOADS_FOLDER, MAX_UPLOAD_BYTES, UPLOADS_FOLDER, formatBytes, homeFreeBytes, type HomeSpace } from '@hyperdesk/contract';
import { ApiError } from '../../api/http';
import { folderQuery } from '../../api/files';
import type { Transfer } from './transfers';
import styles from './Connect.module.css';
import own from './FilesPanel.module.css';

export interface FilesPanelProps {
  packId: string;
  transfers: Transfer[];
  onUpload(files: File[]): void;
  onDownload(path: string): void;
  onClearFinished(): void;
  onClose(): void;
}

const PLACES: [string, string][] = [
  [DOWNLOADS_FOLDER, 'Downloads'],
  [UPLOADS_FOLDER, 'Uploads'],
  ['', 'Home'],
];

/**
 * Files both ways: pick (or drop on the desktop) files to upload into the desktop's ~/Uploads, each with a progress
 * bar; browse ~/Downloads (or another folder of the home) and download a file with a click.
 */
export function FilesPanel(p: FilesPanelProps) {
  const id = useId();
  const picker = useRef<HTMLInputElement>(null);
  const [path, setPath] = useState(DOWNLOADS_FOLDER);
  const folder = useQuery(folderQuery(p.packId, path));
  const shown = path ? `~/${path}` : '~';
  const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
  const missing = folder.error instanceof ApiError && folder.error.code === 'file-not-found';

  return (
    <div className={`${styles.clipboard} ${own.files}`} role="region" aria-labelledby={`${id}-title`} data-testid="files-panel">
      <div className={own.head}>
        <h2 id={`${id}-title`} className={styles.clipboardTitle}>Files</h2>
        <button type="button" className={styles.linkButton} onClick={p.onClose}>Close</button>
      </div>
      <p className={styles.hint}>
        Drop files on the desktop or pick them to upload; they go to ~/Uploads (up to {formatBytes(MAX_UPLOAD_BYTES)} each).
      </p>
      <input ref={picker} type="file" multiple hidden data-testid="files-picker" onChange={(e) => {
          p.onUpload([...(e.target.files ?? [])]);
          e.target.value = '';
        }} />
      <button type="button" className={`${styles.primary} ${own.upload}`} onClick={() => picker.current?.click()}>Upload files…</button>
      {folder.data?.space ? <SpaceLine space={folder.data.space} /> : null}

      {p.transfers.length ? (
        <ul className={own.transfers} aria-label="Transfers">
          {p.transfers.map((t) => (
            <li key={t.id} className={own.transfer} data-state={t.state}>
              <span className={own.transferName} title={t.name}>{t.direction === 'up' ? '↑' : '↓'} {t.name}</span>
              {t.state === 'running' ? (
                <>
                  <progress max={1} value={t.progress} aria-label={`${t.name}: ${Math.round(t.progress * 100)}%`} />
                  <button type="button" className={styles.linkButton} onClick={t.cancel}>Cancel</button>
                </>
              ) : (
                <span className={own.transferNote} role={t.state === 'failed' ? 'alert' : undefined}>{t.message}</span>
              )}
            </li>
          ))}
        </ul>
      ) : null}
      {p.transfers.some((t) => t.state !== 'running') ? (
        <button type="button" className={styles.linkButton} onClick={p.onClearFinished}>Clear finished</button>
      ) : null}

      <div className={own.places} role="group" aria-label="Folders">
        {PLACES.map(([place, label]) => (
          <button key={label} type="button" className={own.place} aria-pressed={path === place} onClick={() => setPath(place)}>
            {label}
          </button>
        ))}
        <button type="button" className={own.place} onClick={() => void folder.refetch()} title="List the folder again">Refresh</button>
      </div>
      <div className={own.folderPath}>
        {path ? (
          <button type="button" className={styles.linkButton} onClick={() => setPath(parent)} aria-label="Up one folder">↑ Up</button>
        ) : null}
        <span data-testid="files-path">{shown}</span>
      </div>
      {folder.isPending ? (
        <p className={styles.hint}>Loading…</p>
      ) : folder.isError ? (
        <p className={styles.hint} role={missing ? undefined : 'alert'}>
          {missing ? `${shown} does not exist yet: files saved there in the desktop will show here.` : folder.error.message}
        </p>
      ) : folder.data.entries.length === 0 ? (
        <p className={styles.hint}>This folder is empty.</p>
      ) : (
        <ul className={own.entries} aria-label={`Files in ${shown}`}>
          {[...folder.data.entries]
            .sort((a, b) => Number(b.folder) - Number(a.folder) || a.name.localeCompare(b.name))
            .map((e) => {
              const full = path ? `${path}/${e.name}` : e.name;
              return (
                <li key={e.name}>
                  <button type="button" className={own.entry} onClick={() => (e.folder ? setPath(full) : p.onDownload(full))} title={e.folder ? `Open ${e.name}` : `Download ${e.name}`}>
                    <span className={own.entryName}>
                      <EntryIcon folder={e.folder} /> {e.name}
                    </span>
                    <span className={own.entrySize}>{e.folder ? '' : formatBytes(e.size)}</span>
                  </button>
                </li>
              );
            })}
          {folder.data.more ? <li className={styles.hint}>and {folder.data.more} more not listed</li> : null}
        </ul>
      )}
    </div>
  );
}

/**
 * The home's disk against its quota: the desktop's own file manager (and `df`) show the whole storage pool's free
 * space, not what this home may still take.
 */
function SpaceLine({ space }: { space: HomeSpace }) {
  const free = homeFreeBytes(space);
  return (
    <div className={own.space} data-testid="files-space">
      <meter min={0} max={space.quotaBytes} value={Math.min(space.usedBytes, space.quotaBytes)} low={space.quotaBytes * 0.8} high={space.quotaBytes * 0.95} optimum={0} aria-label="Home folder's disk in use" />
      <span>
        Home folder: {formatBytes(space.usedBytes)} of {formatBytes(space.quotaBytes)} used, {formatBytes(free)} free
      </span>
    </div>
  );
}

/** Shown over the desktop while files are dragged over the tab. */
export function DropOverlay() {
  return (
    <div className={own.dropZone} aria-hidden="true">
      <p>Drop to upload to ~/Uploads</p>
    </div>
  );
}

/** A folder or a file, drawn here: an emoji needs a font many computers (and CI's Chromium) do not have. */
function EntryIcon({ folder }: { folder: boolean }) {
  return (
    <svg className={own.icon} viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
      {folder ? (
        <path d="M1.5 3.5h4l1.5 1.5h7.5v8h-13z" fill="currentColor" fillOpacity="0.25" stroke="currentColor" />
      ) : (
        <path d="M3.5 1.5h6l3 3v10h-9z M9.5 1.5v3h3" fill="none" stroke="currentColor" />
      )}
    </svg>
  );
}
