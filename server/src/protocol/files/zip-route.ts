/** GET/HEAD /z/{token}/{name}.zip: the ZIPs that ZipDownload and ShareZipDownload hand out, streamed as they are written. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LockedSinceStart, openGrantedZip, verifyZipToken } from '../../operations/content/zip-downloads';
import { newIncidentId } from '../pipeline';
import { CapabilityRoute, contentDisposition, refuse } from './downloads';
import { ZipWriter } from './zip-writer';

export class ZipRoute extends CapabilityRoute {
  protected readonly path = /^\/z\/([^/]+)(?:\/([^/]*))?$/;

  protected async answer(req: IncomingMessage, res: ServerResponse, [token, name]: readonly string[]): Promise<void> {
    const check = verifyZipToken(this.services.secret, token, this.services.now());
    if (check.kind === 'invalid') return refuse(res, 403, 'This download link is not valid.');
    if (check.kind === 'expired') return refuse(res, 410, 'This download link has expired. Ask for a new one.');
    const lookup = await openGrantedZip(this.services, check.grant);
    if (lookup.kind === 'gone') return refuse(res, 404, 'These files are no longer available.');
    if (lookup.kind === 'locked') return refuse(res, 423, 'These files are encrypted and locked: unlock them and ask for a new link.');
    // No Content-Length (the size is known only at the end): chunked, and no Range.
    res.writeHead(200, {
      'Content-Type': 'application/zip',
      'Content-Disposition': contentDisposition(decodedName(name)),
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
    });
    if (req.method === 'HEAD') return void res.end();
    const zip = new ZipWriter(res);
    try {
      for await (const entry of lookup.entries) {
        if (res.destroyed) return;
        if (entry.kind === 'folder') await zip.directory(entry.path, entry.mtime);
        else await zip.file(entry.path, entry.mtime, entry.size, await entry.open());
      }
      await zip.finish();
      res.end();
    } catch (error) {
      // Cut, so that the browser reports a failed download rather than keep a broken archive (a Lock meanwhile is no incident).
      if (!res.destroyed && !(error instanceof LockedSinceStart)) this.log.error('incident', { incident: newIncidentId(), path: '/z/…', error: error instanceof Error ? error.message : String(error) });
      res.destroy();
    }
  }
}

function decodedName(name: string | undefined): string {
  try {
    return name ? decodeURIComponent(name) : 'download.zip';
  } catch {
    return 'download.zip';
  }
}
