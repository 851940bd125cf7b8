// Uploaded images. They live behind the bearer token at /api/v1/files/{id}, and an <img> cannot send
// headers, so the page fetches each one with its token and shows it from a blob: URL (allowed by the
// page's CSP, `img-src 'self' blob:`). Each upload is fetched once per page; the URLs are revoked on
// sign-out.

import { request } from './api';

const cache = new Map<string, Promise<string>>();

/** A blob: URL for an upload, fetched with the page's credentials. */
export function fileUrl(uploadId: string): Promise<string> {
  let p = cache.get(uploadId);
  if (!p) {
    p = (async () => {
      const res = await request('GET', '/files/{uploadId}', { path: { uploadId } });
      const type = (res.headers.get('Content-Type') ?? '').split(';')[0].trim();
      if (!/^image\/(png|jpeg|webp|gif)$/.test(type)) throw new Error(`not an image (${type || 'no type'})`);
      return URL.createObjectURL(new Blob([await res.arrayBuffer()], { type }));
    })();
    p.catch(() => cache.delete(uploadId)); // a later view may try again
    cache.set(uploadId, p);
  }
  return p;
}

/** Loads every upload image (img[data-upload-id]) under root; an image that fails becomes a note. */
export function hydrateImages(root: ParentNode): void {
  for (const img of Array.from(root.querySelectorAll<HTMLImageElement>('img[data-upload-id]'))) {
    const id = img.getAttribute('data-upload-id')!;
    img.removeAttribute('data-upload-id');
    img.classList.add('upload-loading');
    fileUrl(id).then(
      (url) => {
        img.src = url;
        img.classList.remove('upload-loading');
      },
      (err: Error) => {
        const note = document.createElement('span');
        note.className = 'blocked-image';
        note.textContent = `[image ${id} could not be loaded: ${err.message}]`;
        img.replaceWith(note);
      },
    );
  }
}

export function forgetFiles(): void {
  for (const p of cache.values()) p.then(URL.revokeObjectURL, () => {});
  cache.clear();
}
