import { queryOptions } from '@tanstack/react-query';
import { FolderListing, UploadAnswer } from '@hyperdesk/contract';
import { session } from '../auth/session';
import { ApiError, request } from './http';

/**
 * Files of the connected desktop (issue 21.4). Listing goes through request(); uploads and downloads use
 * XMLHttpRequest, the one browser API that reports upload progress and streams a File from disk, with the same
 * idtoken header request() adds. Nothing here is a link: every transfer is a request of the signed-in tab.
 */
export const folderQuery = (packId: string, path: string) =>
  queryOptions({
    queryKey: ['desktop-files', packId, path],
    queryFn: () => request('GET', `/v1/slot/connect/files?packId=${encodeURIComponent(packId)}&path=${encodeURIComponent(path)}`, { schema: FolderListing }),
    retry: false,
  });

/** A request with the id token, its progress reported as a fraction (0–1) of `total`. */
function send(method: string, path: string, o: { body?: Blob; responseType: XMLHttpRequestResponseType; onProgress(fraction: number): void }): { promise: Promise<XMLHttpRequest>; cancel(): void } {
  const xhr = new XMLHttpRequest();
  const promise = (async () => {
    const token = await session.token();
    return new Promise<XMLHttpRequest>((resolve, reject) => {
      xhr.open(method, path);
      if (token) xhr.setRequestHeader('idtoken', token);
      xhr.responseType = o.responseType;
      const target = o.body ? xhr.upload : xhr;
      target.onprogress = (e) => e.lengthComputable && e.total > 0 && o.onProgress(e.loaded / e.total);
      xhr.onload = () => resolve(xhr);
      xhr.onerror = () => reject(new ApiError(0, 'The connection broke; try again.'));
      xhr.onabort = () => reject(new ApiError(0, 'Cancelled.', 'cancelled'));
      if (o.body) xhr.setRequestHeader('content-type', 'application/octet-stream');
      xhr.send(o.body ?? null);
    });
  })();
  return { promise, cancel: () => xhr.abort() };
}

/** The error body of a failed transfer (JSON, also when the response type was a blob). */
async function failure(xhr: XMLHttpRequest): Promise<ApiError> {
  let text = '';
  if (xhr.response instanceof Blob) text = await xhr.response.text();
  else if (typeof xhr.response === 'string') text = xhr.response;
  try {
    const body = JSON.parse(text) as { message?: string; code?: string };
    return new ApiError(xhr.status, body.message ?? `Request failed (${xhr.status})`, body.code);
  } catch {
    return new ApiError(xhr.status, `Request failed (${xhr.status})`);
  }
}

/** Uploads a file into the desktop's ~/Uploads. */
export function uploadFile(packId: string, file: File, onProgress: (fraction: number) => void): { promise: Promise<UploadAnswer>; cancel(): void } {
  const path = `/v1/slot/connect/files/upload?packId=${encodeURIComponent(packId)}&name=${encodeURIComponent(file.name)}`;
  const t = send('PUT', path, { body: file, responseType: 'text', onProgress });
  const promise = t.promise.then(async (xhr) => {
    if (xhr.status !== 201) throw await failure(xhr);
    return UploadAnswer.parse(JSON.parse(xhr.responseText));
  });
  return { promise, cancel: t.cancel };
}

/** Downloads a file of the desktop (path relative to its home) and hands it to the browser to save. */
export function downloadFile(packId: string, path: string, onProgress: (fraction: number) => void): { promise: Promise<void>; cancel(): void } {
  const url = `/v1/slot/connect/files/download?packId=${encodeURIComponent(packId)}&path=${encodeURIComponent(path)}`;
  const t = send('GET', url, { responseType: 'blob', onProgress });
  const promise = t.promise.then(async (xhr) => {
    if (xhr.status !== 200) throw await failure(xhr);
    const name = path.split('/').pop() ?? 'download';
    const href = URL.createObjectURL(xhr.response as Blob);
    const a = document.createElement('a');
    a.href = href;
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(href), 60_000);
  });
  return { promise, cancel: t.cancel };
}
