/**
 * What a preview URL (/v/, FilePreview and SharePreview) serves, decided from the bytes
 * (docs/security.md "Safe serving"): the extension says which kind the file claims to be, the first
 * bytes must agree, and the answer is the original with its sniffed type, the `view` rendition, or
 * nothing (unpreviewable → 415). The grant is checked exactly as a download's (downloads.ts).
 */
import type { Services } from '../context';
import { openGrantedFile, type DownloadGrant, type Downloadable } from '../content/downloads';
import { claimedKind, imagePixels, looksLikeText, sniff, SNIFF_BYTES } from './content-sniffing';
import { openDerivedImage, type DerivedImage } from './derived-images';

/** Images larger than this are shown through the rendition, never as they are. */
export const MAX_ORIGINAL_IMAGE_PIXELS = 24_000_000;
export const MAX_ORIGINAL_IMAGE_BYTES = 20 * 1024 * 1024;

export type PreviewLookup =
  | { readonly kind: 'original'; readonly file: Downloadable; readonly contentType: string }
  | { readonly kind: 'rendition'; readonly image: DerivedImage }
  | { readonly kind: 'unpreviewable' }
  | { readonly kind: 'notFound' }
  | { readonly kind: 'locked' };

export async function openPreview(services: Services, grant: DownloadGrant): Promise<PreviewLookup> {
  const lookup = await openGrantedFile(services, grant);
  if (lookup.kind !== 'found') return lookup;
  const { file } = lookup;
  const claimed = claimedKind(file.ext);
  const head = await readHead(file);
  const sniffed = sniff(head);

  if (claimed === 'image' && (sniffed ? sniffed.kind === 'image' : file.ext.toLowerCase() === 'svg')) {
    const pixels = sniffed && imagePixels(head, sniffed.type);
    const asItIs = sniffed && !grant.renditionOnly && file.size <= MAX_ORIGINAL_IMAGE_BYTES && pixels !== undefined && pixels <= MAX_ORIGINAL_IMAGE_PIXELS;
    if (asItIs) return { kind: 'original', file, contentType: sniffed.type };
    // Never for encrypted content (openDerivedImage answers undefined): it would be plaintext at rest.
    const image = await openDerivedImage(services, lookup.content, 'view');
    return image ? { kind: 'rendition', image } : { kind: 'unpreviewable' };
  }
  if (grant.renditionOnly || claimed === undefined || claimed === 'image') return { kind: 'unpreviewable' };
  if (claimed === 'text') return !sniffed && looksLikeText(head) ? { kind: 'original', file, contentType: 'text/plain' } : { kind: 'unpreviewable' };
  return sniffed?.kind === claimed ? { kind: 'original', file, contentType: sniffed.type } : { kind: 'unpreviewable' };
}

async function readHead(file: Downloadable): Promise<Buffer> {
  if (file.size === 0) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const chunk of await file.open({ start: 0, end: Math.min(file.size, SNIFF_BYTES) - 1 })) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
