/**
 * GET/HEAD /s/image/{share id}/{tag}, a share's cover image (docs/protocol.md §15): one 404 for every reason it does not
 * serve; type from the bytes, nosniff and a sandboxing CSP; `private, max-age=3600` (a new image or code is a new URL,
 * and shared caches stay out so a binned share stops answering at once). Other /s/ paths are the web app's.
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
