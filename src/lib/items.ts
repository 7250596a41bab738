/** Small facts about items that pages and components share. */

/** What these helpers read of an item (api/results.ts's Item): lib does not depend on the api. */
interface ItemFacts {
  readonly type: 'folder' | 'file';
  readonly id: number;
  readonly name: string;
}

/** A key unique among folders and files (their ids are counted separately). */
export function itemKey(item: Pick<ItemFacts, 'type' | 'id'>): string {
  return `${item.type === 'folder' ? 'd' : 'f'}${item.id}`;
}

/** The folder part of an absolute path: "/A/B/x.txt" → "/A/B", "/x.txt" → "/". */
export function parentPath(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

/** The folder and file ids of some items, split for the id-list parameters (dirids, fids). */
export function splitIds(items: readonly Pick<ItemFacts, 'type' | 'id'>[]): { readonly folders: number[]; readonly files: number[] } {
  const folders: number[] = [];
  const files: number[] = [];
  for (const item of items) (item.type === 'folder' ? folders : files).push(item.id);
  return { folders, files };
}

/** The id-list parameters of some items in one call: `{ dirids: '1,3', fids: '7' }`. */
export function idParams(items: readonly Pick<ItemFacts, 'type' | 'id'>[]): { readonly dirids: string; readonly fids: string } {
  const { folders, files } = splitIds(items);
  return { dirids: folders.join(','), fids: files.join(',') };
}

/** What a rename selects: a file's name without its extension ("report.final.pdf" → 0..12), else the whole name. */
export function nameStemLength(item: Pick<ItemFacts, 'type' | 'name'>): number {
  if (item.type === 'folder') return item.name.length;
  const dot = item.name.lastIndexOf('.');
  return dot > 0 && dot < item.name.length - 1 ? dot : item.name.length;
}
