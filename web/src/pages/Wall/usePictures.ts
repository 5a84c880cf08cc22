import { useEffect, useState } from 'react';
import type { WallStreamNote } from '@hyperdesk/contract';
import { readWallStream } from '../../api/wall';

const RETRY_MS = 3_000;

/**
 * The wall's picture stream (a socket-like effect, house rule 8): machine id → object URL of its latest picture.
 * Opened again after a failure; closed when the course or the watched machine changes.
 */
export function usePictures(courseId: string, watch: string | null, onNote: (n: WallStreamNote) => void) {
  const [pictures, setPictures] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | null>(null);
  useEffect(() => {
    const ac = new AbortController();
    const urls = new Map<string, string>();
    let retry: ReturnType<typeof setTimeout> | null = null;
    const open = () => {
      readWallStream(courseId, watch, ac.signal, {
        picture(p) {
          setFailure(null);
          const url = URL.createObjectURL(p.jpeg);
          const old = urls.get(p.machineId);
          urls.set(p.machineId, url);
          setPictures((prev) => ({ ...prev, [p.machineId]: url }));
          // The old picture stays until the new one has been drawn.
          if (old) setTimeout(() => URL.revokeObjectURL(old), 2_000);
        },
        note: onNote,
      })
        .then(() => !ac.signal.aborted && (retry = setTimeout(open, RETRY_MS)))
        .catch((err: Error) => {
          if (ac.signal.aborted) return;
          setFailure(err.message);
          retry = setTimeout(open, RETRY_MS);
        });
    };
    open();
    return () => {
      ac.abort();
      if (retry) clearTimeout(retry);
      for (const url of urls.values()) URL.revokeObjectURL(url);
      setPictures({});
    };
    // onNote is read through the latest render's closure on purpose: a new function must not reopen the stream.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [courseId, watch]);
  return { pictures, failure };
}
