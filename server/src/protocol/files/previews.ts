/**
 * GET/HEAD /v/{token}/{name}: the preview URLs that FilePreview and SharePreview hand out
 * (operations/previews/previews.ts decides what they serve). Token and grant as /d/ (downloads.ts):
 * 403 not genuine (a /d/ token is not genuine here), 410 expired, 404 gone, 423 locked. Then:
 *
 * - the original with the type sniffed from its first bytes, Range and ETag as /d/, or the image's
 *   `view` rendition (image/webp, whole); 415 with a short text when the file is not previewable;
 *   503 with `Retry-After: 1` when the rendition must be made and the making queue is full;
 * - every answer, refusals included: `Content-Disposition: inline`, nosniff, `Content-Security-Policy:
 *   default-src 'none'; sandbox` and `Cache-Control: private, no-cache`;
 * - the token is a capability: the request log keeps only `/v/…` (request-target.ts loggablePath).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { verifyDownloadToken } from '../../operations/content/downloads';
import { MakingQueueFull } from '../../operations/previews/derived-images';
import { openPreview } from '../../operations/previews/previews';
import { answer } from '../http-common';
import { CapabilityRoute, contentDisposition, serveFile, serveWhole } from './downloads';

const PREVIEW_CACHE = 'private, no-cache';
const SAFETY = { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; sandbox" };

export class PreviewRoute extends CapabilityRoute {
  protected readonly path = /^\/v\/([^/]+)(?:\/[^/]*)?$/;
  protected override readonly answerHeaders = { ...SAFETY, 'Content-Disposition': 'inline' };

  protected async answer(req: IncomingMessage, res: ServerResponse, [token]: readonly string[]): Promise<void> {
    const check = verifyDownloadToken(this.services.secret, token, this.services.now(), 'v');
    if (check.kind === 'invalid') return this.refuse(res, 403, 'This preview link is not valid.');
    if (check.kind === 'expired') return this.refuse(res, 410, 'This preview link has expired. Ask for a new one.');
    let preview;
    try {
      preview = await openPreview(this.services, check.grant);
    } catch (error) {
      if (error instanceof MakingQueueFull) return this.refuse(res, 503, 'Too many images are being prepared. Try again.', { 'Retry-After': '1' });
      throw error;
    }
    if (preview.kind === 'notFound') return this.refuse(res, 404, 'This file is no longer available.');
    if (preview.kind === 'locked') return this.refuse(res, 423, 'This file is encrypted: unlock it and ask for a new link.');
    if (preview.kind === 'unpreviewable') return this.refuse(res, 415, 'This file cannot be previewed. Download it instead.');
    if (preview.kind === 'original') {
      const headers = { 'Content-Disposition': contentDisposition(preview.file.name, 'inline') };
      return serveFile(req, res, preview.file, this.log, { logPath: '/v/…', contentType: preview.contentType, headers });
    }
    const { image } = preview;
    const headers = { 'Cache-Control': PREVIEW_CACHE, ...SAFETY, 'Content-Disposition': 'inline' };
    try {
      await serveWhole(req, res, { etag: image.etag, contentType: 'image/webp', size: image.size, open: async () => image.body }, headers, this.log, '/v/…');
    } finally {
      image.body.destroy();
    }
  }

  private refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    answer(res, { status, contentType: 'text/plain; charset=utf-8', cacheControl: PREVIEW_CACHE, headers: { ...this.answerHeaders, ...headers } }, message + '\n');
  }
}
