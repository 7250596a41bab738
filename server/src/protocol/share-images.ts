/**
 * GET/HEAD /s/image/{share id}/{tag}: the cover image of a share, whose URL ShareImageUpload answers
 * and the share's `image` attribute carries (operations/share-images.ts says when it answers).
 *
 * - 404 for anything that does not serve (unknown share or tag, replaced image, share gone, item in
 *   the bin or encrypted): one answer, so that a URL tells nothing about why. 405 for other methods.
 * - `Content-Type` from the bytes themselves (PNG, JPEG, GIF, WebP), `X-Content-Type-Options:
 *   nosniff` and `Content-Security-Policy: default-src 'none'; sandbox`: an image and nothing else,
 *   never a page of this origin.
 * - Cacheable by the browser: `Cache-Control: private, max-age=3600` and a strong ETag
 *   (If-None-Match → 304). A new image, or a new extraction code, has a new URL; `private` keeps
 *   shared caches out, so that a share moved to the bin stops answering at once for everyone else.
 * - Other paths under /s/ (the share page itself, `/s/{code}`) are left to the web app.
 * - The tag is a capability: the request log keeps only `/s/…` (request-target.ts loggablePath).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '../log';
import type { Services } from '../operations/context';
import { openShareImage } from '../operations/share-images';
import { answer } from './http-common';
import { newIncidentId } from './pipeline';
import { routePath, type RequestTarget } from './request-target';

const IMAGE_PATH = /^\/s\/image\/([^/]+)\/([^/]+)$/;

export const SHARE_IMAGE_CACHE = 'private, max-age=3600';

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  answer(res, { status, contentType: 'text/plain; charset=utf-8', cacheControl: 'no-store', headers }, message + '\n');
}

/** If-None-Match (weak comparison): `*` or any listed tag with the same opaque value. */
function noneMatch(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(', ') : header;
  if (value.trim() === '*') return true;
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

export class ShareImageRoute {
  constructor(
    private readonly services: Services,
    private readonly log: Logger,
  ) {}

  /** Answers the request if it is a cover image URL; false when the path is not one. */
  async route(req: IncomingMessage, res: ServerResponse, url: RequestTarget): Promise<boolean> {
    const match = IMAGE_PATH.exec(routePath(url.pathname));
    if (!match) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      refuse(res, 405, 'Method not allowed.', { Allow: 'GET, HEAD' });
      return true;
    }
    const image = await openShareImage(this.services, match[1], match[2]);
    if (!image) {
      refuse(res, 404, 'This image is not available.');
      return true;
    }
    const headers: Record<string, string | number> = {
      ETag: image.etag,
      'Cache-Control': SHARE_IMAGE_CACHE,
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
    };
    if (noneMatch(req.headers['if-none-match'], image.etag)) {
      res.writeHead(304, headers);
      res.end();
      return true;
    }
    headers['Content-Type'] = image.contentType;
    headers['Content-Length'] = image.size;
    if (req.method === 'HEAD') {
      res.writeHead(200, headers);
      res.end();
      return true;
    }
    // Opened before the head goes out, so that a missing blob becomes a clean 500.
    const body = await image.open();
    res.writeHead(200, headers);
    try {
      await pipeline(body, res);
    } catch (error) {
      if (!res.destroyed || (error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        this.log.error('incident', { incident: newIncidentId(), path: '/s/…', error: error instanceof Error ? error.message : String(error) });
      }
      res.destroy();
    }
    return true;
  }
}
