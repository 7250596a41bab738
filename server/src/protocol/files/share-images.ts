/**
 * GET/HEAD /s/image/{share id}/{tag}: the cover image of a share, whose URL ShareImageUpload answers
 * and the share's `image` attribute carries (operations/sharing/share-images.ts says when it answers).
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
import { openShareImage } from '../../operations/sharing/share-images';
import { CapabilityRoute, refuse, serveWhole } from './downloads';

export const SHARE_IMAGE_CACHE = 'private, max-age=3600';

export class ShareImageRoute extends CapabilityRoute {
  protected readonly path = /^\/s\/image\/([^/]+)\/([^/]+)$/;

  protected async answer(req: IncomingMessage, res: ServerResponse, [shareId, tag]: readonly string[]): Promise<void> {
    const image = await openShareImage(this.services, shareId, tag);
    if (!image) return refuse(res, 404, 'This image is not available.');
    const headers = { 'Cache-Control': SHARE_IMAGE_CACHE, 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; sandbox" };
    await serveWhole(req, res, image, headers, this.log, '/s/…');
  }
}
