import { useCallback, useEffect, useRef, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { MAX_UPLOAD_BYTES, formatBytes } from '@hyperdesk/contract';
import { ApiError } from '../../api/http';
import { downloadFile, uploadFile } from '../../api/files';

export interface Transfer {
  id: number;
  direction: 'up' | 'down';
  name: string;
  /** 0–1 while running. */
  progress: number;
  state: 'running' | 'done' | 'failed';
  /** Where an upload went, or why a transfer failed. */
  message: string;
  cancel(): void;
}

/** Transfers of this tab running at once. */
const MAX_AT_ONCE = 2;

const messageOf = (err: unknown) => (err instanceof ApiError || err instanceof Error ? err.message : 'Something went wrong; try again.');

/**
 * The tab's file transfers (uploads into ~/Uploads, downloads of the desktop's files), kept while the Files panel is
 * closed: a drop on the desktop starts an upload whether or not the panel shows it.
 */
export function useTransfers(packId: string) {
  const [transfers, setTransfers] = useState<Transfer[]>([]);
  const next = useRef(1);
  const queryClient = useQueryClient();
  const update = useCallback((id: number, change: Partial<Transfer>) => setTransfers((all) => all.map((t) => (t.id === id ? { ...t, ...change } : t))), []);

  // Two transfers at a time (the server takes four per machine); the rest wait their turn, listed at 0%.
  const running = useRef(0);
  const waiting = useRef<(() => void)[]>([]);
  const start = useCallback(
    (direction: Transfer['direction'], name: string, run: (onProgress: (f: number) => void) => { promise: Promise<string>; cancel(): void }) => {
      const id = next.current++;
      let cancelled = false;
      let cancel = () => {
        cancelled = true;
        update(id, { state: 'failed', message: 'Cancelled.' });
      };
      // Every running transfer stays listed, and the last few that ended.
      setTransfers((all) => [...all, { id, direction, name, progress: 0, state: 'running' as const, message: '', cancel: () => cancel() }].filter((x, i, list) => x.state === 'running' || i >= list.length - 6));
      const go = () => {
        if (cancelled) return void waiting.current.shift()?.();
        running.current++;
        const t = run((progress) => update(id, { progress }));
        cancel = t.cancel;
        t.promise
          .then(
            (message) => update(id, { state: 'done', progress: 1, message }),
            (err: unknown) => update(id, { state: 'failed', message: messageOf(err) }),
          )
          .finally(() => {
            running.current--;
            waiting.current.shift()?.();
          });
      };
      if (running.current < MAX_AT_ONCE) go();
      else waiting.current.push(go);
    },
    [update],
  );

  const upload = useCallback(
    (files: Iterable<File>) => {
      for (const file of files) {
        if (file.size > MAX_UPLOAD_BYTES) {
          start('up', file.name, () => ({ promise: Promise.reject(new Error(`Files up to ${formatBytes(MAX_UPLOAD_BYTES)} can be uploaded; this one is ${formatBytes(file.size)}.`)), cancel: () => undefined }));
          continue;
        }
        start('up', file.name, (onProgress) => {
          const u = uploadFile(packId, file, onProgress);
          const promise = u.promise.then((a) => {
            void queryClient.invalidateQueries({ queryKey: ['desktop-files', packId] });
            return `Saved as ~/${a.path}`;
          });
          return { promise, cancel: u.cancel };
        });
      }
    },
    [packId, queryClient, start],
  );

  const download = useCallback(
    (path: string) => {
      start('down', path.split('/').pop() ?? path, (onProgress) => {
        const d = downloadFile(packId, path, onProgress);
        return { promise: d.promise.then(() => 'Downloaded'), cancel: d.cancel };
      });
    },
    [packId, start],
  );

  const clearFinished = useCallback(() => setTransfers((all) => all.filter((t) => t.state === 'running')), []);
  return { transfers, upload, download, clearFinished };
}

/** Files dragged over the tab: `dragging` while they hover, `onFiles` when dropped (document listeners: house rule 8). */
export function useFileDrop(enabled: boolean, onFiles: (files: File[]) => void): boolean {
  const [dragging, setDragging] = useState(false);
  useEffect(() => {
    if (!enabled) return;
    let depth = 0;
    const hasFiles = (e: DragEvent) => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');
    const onEnter = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      depth++;
      setDragging(true);
    };
    const onOver = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    };
    const onLeave = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (!depth) setDragging(false);
    };
    const onDrop = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth = 0;
      setDragging(false);
      const files = [...(e.dataTransfer?.files ?? [])];
      if (files.length) onFiles(files);
    };
    document.addEventListener('dragenter', onEnter);
    document.addEventListener('dragover', onOver);
    document.addEventListener('dragleave', onLeave);
    document.addEventListener('drop', onDrop);
    return () => {
      document.removeEventListener('dragenter', onEnter);
      document.removeEventListener('dragover', onOver);
      document.removeEventListener('dragleave', onLeave);
      document.removeEventListener('drop', onDrop);
    };
  }, [enabled, onFiles]);
  return dragging && enabled;
}
