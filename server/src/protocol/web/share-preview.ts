/**
 * Link previews of share pages (docs/sharing.md §7): `GET /s/{code}` gets a title and Open Graph tags. Read through
 * ShareOpen with an empty extraction code, so a preview passes the share page's checks and throttling (probing codes
 * is as slow as through ShareOpen); anything but an open share gets one generic preview.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../../log';
import type { CallContext, Services } from '../../operations/context';
import { OpError, ResultCode } from '../../operations/errors';
import { shareOpen } from '../../operations/sharing/share-service';
import { SHARE_CODE_FORMAT } from '../../operations/sharing/shares';
import { requestFacts } from '../http-common';
import { newIncidentId } from '../pipeline';

/** `/s/{code}` (with or without a trailing slash); the cover images below it are not pages. */
export const SHARE_PAGE_PATH = /^\/s\/([^/]+)\/?$/;

export const SITE_NAME = 'Files';
const DESCRIPTION_MAX = 300;

export interface SharePreview {
  readonly title: string;
  readonly ogTitle: string;
  readonly description: string;
  /** The share page's canonical URL: no query string, so never an extraction code. */
  readonly url: string;
  /** Absolute URL of the cover image, when an open share has one. */
  readonly image?: string;
  readonly imageAlt?: string;
}

const SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

/** 1536 → "1.5 KB" (binary multiples, as the app shows sizes). */
export function formatPreviewSize(bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < SIZE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit === 0 || value >= 100 ? 0 : 1;
  return `${new Intl.NumberFormat('en', { maximumFractionDigits: digits }).format(value)} ${SIZE_UNITS[unit]}`;
}

/** One line of at most `max` characters: previews show a line or two. */
function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

export function genericPreview(url: string): SharePreview {
  return {
    title: `Shared files · ${SITE_NAME}`,
    ogTitle: 'Shared files',
    description: 'Open the link to see what is shared.',
    url,
  };
}

export function protectedPreview(url: string): SharePreview {
  return {
    title: `Shared files · ${SITE_NAME}`,
    ogTitle: 'Shared files — extraction code required',
    description: 'Open the link and enter the extraction code to see what is shared.',
    url,
  };
}

export function openPreview(
  url: string,
  item: { readonly type: 'file' | 'folder'; readonly name: string; readonly size: number; readonly description: string; readonly image: string },
): SharePreview {
  const what = `${item.type === 'folder' ? 'Shared folder' : 'Shared file'} · ${formatPreviewSize(item.size)}`;
  const description = oneLine(item.description, DESCRIPTION_MAX);
  return {
    title: `${item.name} · ${SITE_NAME}`,
    ogTitle: item.name,
    description: description ? `${what} — ${description}` : what,
    url,
    ...(item.image ? { image: item.image, imageAlt: `Cover image of ${item.name}` } : {}),
  };
}

/** Text for HTML: element content and double-quoted attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** The tags that go into <head>: robots, description, Open Graph, Twitter. */
export function previewTags(preview: SharePreview): string {
  const meta = (attribute: 'name' | 'property', key: string, content: string) =>
    `<meta ${attribute}="${key}" content="${escapeHtml(content)}" />`;
  const tags = [
    meta('name', 'robots', 'noindex'),
    meta('name', 'description', preview.description),
    meta('property', 'og:site_name', SITE_NAME),
    meta('property', 'og:type', 'website'),
    meta('property', 'og:title', preview.ogTitle),
    meta('property', 'og:description', preview.description),
    meta('property', 'og:url', preview.url),
  ];
  if (preview.image) {
    tags.push(meta('property', 'og:image', preview.image));
    if (preview.imageAlt) tags.push(meta('property', 'og:image:alt', preview.imageAlt));
  }
  tags.push(meta('name', 'twitter:card', preview.image ? 'summary_large_image' : 'summary'));
  return tags.join('\n    ');
}

/** index.html with the preview: <title> replaced, tags added before </head>; a page without </head> is answered as it is. */
export function withPreview(html: string, preview: SharePreview): string {
  const head = html.search(/<\/head>/i);
  if (head < 0) return html;
  const title = `<title>${escapeHtml(preview.title)}</title>`;
  const tags = `    ${previewTags(preview)}\n  `;
  const withTags = `${html.slice(0, head)}${tags}${html.slice(head)}`;
  return /<title>[\s\S]*?<\/title>/i.test(withTags)
    ? withTags.replace(/<title>[\s\S]*?<\/title>/i, () => title)
    : withTags.replace(/<\/head>/i, () => `${title}\n  </head>`);
}

/** Looks shares up for previews, the way the share page's first ShareOpen does. */
export class SharePreviews {
  constructor(
    private readonly services: Services,
    private readonly log: Logger,
  ) {}

  /** The preview of `/s/{code}`; never throws (a failure gives the generic preview, and is logged). */
  async lookup(req: IncomingMessage, code: string): Promise<SharePreview> {
    const facts = requestFacts(req, this.services.config);
    const url = `${facts.baseUrl}/s/${SHARE_CODE_FORMAT.test(code) ? code : encodeURIComponent(code)}`;
    if (!SHARE_CODE_FORMAT.test(code)) return genericPreview(url);
    try {
      const ctx: CallContext = { services: this.services, caller: null, clientAddress: facts.clientAddress, baseUrl: facts.baseUrl };
      const { item } = await shareOpen(ctx, { code, downpwd: '' });
      return openPreview(url, {
        type: item.type,
        name: item.name,
        size: item.size,
        description: item.share?.description ?? '',
        image: item.share?.image ?? '',
      });
    } catch (error) {
      if (error instanceof OpError) {
        return error.code === ResultCode.Forbidden && error.reason === 'downpwd-required' ? protectedPreview(url) : genericPreview(url);
      }
      this.log.error('incident', { incident: newIncidentId(), path: '/s/…', error: error instanceof Error ? error.message : String(error) });
      return genericPreview(url);
    }
  }
}
