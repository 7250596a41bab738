/**
 * GET/HEAD /t/{key}/{fid}/{small|large}: thumbnails, under the prefix ThumbnailBase and
 * ShareThumbnailBase answer (operations/previews/thumbnails.ts says what a key grants).
 *
 * - key not genuine → 403, expired → 410; a file the key does not give, or with no thumbnail (not
 *   an image, encrypted, unreadable) → 404, and the app shows the type icon;
 * - 200 `image/webp` with a strong ETag (content SHA-256 and variant), `Cache-Control: private,
 *   max-age=86400`, nosniff and a sandboxing CSP; If-None-Match → 304 without making anything;
 * - 503 with `Retry-After: 1` when the making queue is full; the request log keeps only `/t/…`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MakingQueueFull } from '../../operations/previews/derived-images';
import { findThumbnail } from '../../operations/previews/thumbnails';
import { CapabilityRoute, noneMatch, refuse, streamBody } from './downloads';

const REFUSALS = {
  invalid: [403, 'This thumbnail link is not valid.'],
  expired: [410, 'This thumbnail link has expired.'],
  notFound: [404, 'No thumbnail.'],
} as const;

export class ThumbnailRoute extends CapabilityRoute {
  protected readonly path = /^\/t\/([^/]+)\/([^/]+)\/([^/]+)$/;

  protected async answer(req: IncomingMessage, res: ServerResponse, [key, fid, variant]: readonly string[]): Promise<void> {
    const lookup = await findThumbnail(this.services, key, fid, variant);
    if (lookup.kind !== 'found') return refuse(res, REFUSALS[lookup.kind][0], REFUSALS[lookup.kind][1]);
    const headers: Record<string, string | number> = {
      ETag: lookup.etag,
      'Cache-Control': 'private, max-age=86400',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
    };
    if (noneMatch(req.headers['if-none-match'], lookup.etag)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    let image;
    try {
      image = await lookup.open();
    } catch (error) {
      if (error instanceof MakingQueueFull) return refuse(res, 503, 'Thumbnails are busy: try again in a moment.', { 'Retry-After': '1' });
      throw error;
    }
    if (!image) return refuse(res, 404, 'No thumbnail.');
    res.writeHead(200, { ...headers, 'Content-Type': 'image/webp', 'Content-Length': image.size });
    if (req.method === 'HEAD') {
      image.body.destroy();
      res.end();
      return;
    }
    await streamBody(image.body, res, this.log, '/t/…');
  }
}
