/**
 * A file's thumbnail over its type icon (the children): the icon shows while the image loads and
 * stays when there is none. Only images and PDFs the service can read ask for one; encrypted files never.
 * The URL prefix (ThumbnailBase, or ShareThumbnailBase on the share page) is asked once and kept
 * an hour: it is valid to the end of the next UTC day, so the browser's cache serves a day's views.
 */
import { queryOptions, useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useState, type ReactNode } from 'react';
import { api } from '../../api/client';
import type { Item } from '../../api/results';

/** Whose thumbnails a list shows: the signed-in owner's, or a share's for its visitors. */
export type ThumbnailSource = 'owner' | { readonly code: string; readonly downpwd: string };
export const ThumbnailSourceContext = createContext<ThumbnailSource>('owner');

/** What the service makes thumbnails of (images with sharp, a PDF's first page with pdf.js); other files keep their icon. */
const THUMBNAIL_EXTENSIONS = new Set(['jpg', 'jpeg', 'jpe', 'png', 'gif', 'webp', 'avif', 'tif', 'tiff', 'svg', 'pdf']);
const PREFIX_KEY = ['thumbnail-base'] as const;
const RETRIES = 2;

export const prefixQuery = (source: ThumbnailSource) =>
  queryOptions({
    queryKey: source === 'owner' ? PREFIX_KEY : [...PREFIX_KEY, source.code, source.downpwd],
    queryFn: async ({ signal }) => (source === 'owner' ? await api.thumbnailBase({}, { signal }) : await api.shareThumbnailBase(source, { signal })).url,
    staleTime: 3_600_000,
  });

export const wantsThumbnail = (item: Item) => item.type === 'file' && !item.encrypted && THUMBNAIL_EXTENSIONS.has(item.ext.toLowerCase());

/** The prefix for a whole list: one query, not one per row (each an observer to make in the first render), asked once `wanted`. */
export function useThumbnailPrefix(wanted: boolean): string | undefined {
  return useQuery({ ...prefixQuery(useContext(ThumbnailSourceContext)), enabled: wanted }).data;
}

export function Thumbnail({
  item,
  prefix,
  large = false,
  children,
}: {
  readonly item: Item;
  /** From useThumbnailPrefix; none yet: the icon. */
  readonly prefix: string | undefined;
  readonly large?: boolean;
  readonly children: ReactNode;
}) {
  if (!prefix || !wantsThumbnail(item)) return children;
  const src = `${prefix}${item.id}/${large ? 'large' : 'small'}`;
  return (
    <ThumbnailImage key={src} src={src} large={large}>
      {children}
    </ThumbnailImage>
  );
}

function ThumbnailImage({ src, large, children }: { readonly src: string; readonly large: boolean; readonly children: ReactNode }) {
  const client = useQueryClient();
  const [state, setState] = useState<'loading' | 'shown' | 'none'>('loading');
  const [attempt, setAttempt] = useState(0);

  // An <img> does not say why it failed: HEAD does. 404: no thumbnail; 403/410: the prefix has
  // expired (asked again); else (503: the service is busy making others) try again shortly.
  const onError = async () => {
    const status = await fetch(src, { method: 'HEAD' }).then((answer) => answer.status, () => 0);
    if (status === 403 || status === 410) void client.invalidateQueries({ queryKey: PREFIX_KEY });
    if (status === 404 || status === 403 || status === 410 || attempt >= RETRIES) setState('none');
    else setTimeout(() => setAttempt(attempt + 1), 1000 * (attempt + 1));
  };

  return (
    <span className={`relative flex shrink-0 items-center justify-center ${large ? 'h-16 w-full' : 'size-6'}`}>
      {state !== 'shown' && children}
      {state !== 'none' && (
        <img
          key={attempt}
          src={src}
          alt=""
          loading="lazy"
          decoding="async"
          data-thumbnail=""
          draggable={false}
          onLoad={() => setState('shown')}
          onError={() => void onError()}
          className={`absolute inset-0 size-full object-contain ${state === 'shown' ? '' : 'opacity-0'}`}
        />
      )}
    </span>
  );
}
