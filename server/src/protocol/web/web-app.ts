/**
 * The built web app (dist/web) on the services' origin: its client routes answer index.html, any other path 404 (a
 * probe of /healthz-typo or /.env must not look like a page); hashed assets are cached for good; a share page gets its
 * link preview (share-preview.ts), is never cached (it names the share) and is noindex.
 */
import { createReadStream, promises as fs } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { answer } from '../http-common';
import { decodedOrAsSent, routePath } from '../request-target';
import { SHARE_PAGE_PATH, withPreview, type SharePreviews } from './share-preview';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The headers of every app page. The build has no inline script or style, so all comes from this origin; img-src adds
 * `data:` (favicon) and `blob:` (a chosen cover's preview); Referrer-Policy keeps a share URL's codes on this site.
 * Checked by server/test/reliability/security-headers.test.ts and the e2e specs.
 */
export const APP_SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
    "connect-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
};

const NOT_BUILT = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Files</title></head>
<body><h1>The web app is not built</h1><p>Run <code>npm run build:web</code> (npm start does it for you).</p>
<p>The services: <a href="/OAuthService.asmx">OAuthService</a>, <a href="/FileService.asmx">FileService</a>,
<a href="/UserService.asmx">UserService</a>, <a href="/ShareService.asmx">ShareService</a>.</p></body></html>
`;

/**
 * The web app's routes (src/App.tsx, in react-router's syntax; app-routes.test.ts checks both agree). Matched as
 * react-router does: any case, an optional trailing slash, a `:param` standing for one segment.
 */
export const APP_ROUTES = ['/', '/login', '/s/:code', '/folder/:id', '/search', '/recent', '/bin', '/links', '/shares'] as const;

const APP_ROUTE = new RegExp(
  `^(?:${APP_ROUTES.map((route) => route.replace(/\/$/, '').replace(/:\w+/g, '[^/]+')).join('|')})/?$`,
  'i',
);

export function isAppRoute(pathname: string): boolean {
  return APP_ROUTE.test(pathname);
}

/** What a path outside the app answers: a page of its own (the app's router never sees it), with a way back. */
const NOT_FOUND = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Page not found</title></head>
<body><main><h1>Page not found</h1><p>There is no page at this address.</p><p><a href="/">Go to your files</a></p></main></body></html>
`;

export class WebApp {
  private readonly root: string;

  constructor(
    root: string,
    /** Link previews of share pages; without them /s/{code} is index.html as it is. */
    private readonly sharePreviews?: SharePreviews,
  ) {
    this.root = path.resolve(root);
  }

  async serve(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      answer(res, { status: 405, contentType: 'text/plain; charset=utf-8', headers: { Allow: 'GET, HEAD' } }, 'Method not allowed\n');
      return;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathname);
    } catch {
      answer(res, { status: 400, contentType: 'text/plain; charset=utf-8' }, 'Bad path\n');
      return;
    }
    const file = path.resolve(this.root, '.' + path.posix.normalize('/' + decoded));
    const inside = file === this.root || file.startsWith(this.root + path.sep);
    if (inside && path.extname(file) !== '' && (await isFile(file))) {
      const immutable = decoded.startsWith('/assets/');
      return this.sendFile(res, file, immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    }
    // Read as the capability routes read a path (request-target.ts routePath): `/S/{code}` and `//s/{code}`
    // are share pages to the app's router too, and the log redacts them the same way.
    const route = routePath(pathname);
    if (!isAppRoute(route)) {
      answer(res, { status: 404, contentType: CONTENT_TYPES['.html'], cacheControl: 'no-cache', headers: APP_SECURITY_HEADERS }, NOT_FOUND);
      return;
    }
    const index = path.join(this.root, 'index.html');
    const share = SHARE_PAGE_PATH.exec(route);
    if (share && this.sharePreviews && (await isFile(index))) return this.sendSharePage(req, res, index, decodedOrAsSent(share[1]));
    if (await isFile(index)) return this.sendFile(res, index, 'no-cache');
    answer(res, { status: 200, contentType: 'text/html; charset=utf-8', headers: APP_SECURITY_HEADERS }, NOT_BUILT);
  }

  private async sendSharePage(req: IncomingMessage, res: ServerResponse, index: string, code: string): Promise<void> {
    const [template, preview] = await Promise.all([fs.readFile(index, 'utf8'), this.sharePreviews!.lookup(req, code)]);
    const html = withPreview(template, preview);
    answer(
      res,
      {
        status: 200,
        contentType: CONTENT_TYPES['.html'],
        cacheControl: 'no-store',
        headers: { ...APP_SECURITY_HEADERS, 'X-Robots-Tag': 'noindex' },
      },
      html,
    );
  }

  private async sendFile(res: ServerResponse, file: string, cacheControl: string): Promise<void> {
    const stat = await fs.stat(file);
    res.statusCode = 200;
    res.setHeader('Content-Type', CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream');
    res.setHeader('Content-Length', stat.size);
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    for (const [name, value] of Object.entries(APP_SECURITY_HEADERS)) res.setHeader(name, value);
    if (res.req.method === 'HEAD') {
      res.end();
      return;
    }
    await new Promise<void>((resolve) => {
      const stream = createReadStream(file);
      stream.on('error', () => {
        res.destroy();
        resolve();
      });
      res.on('close', resolve);
      stream.pipe(res);
    });
  }
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}
