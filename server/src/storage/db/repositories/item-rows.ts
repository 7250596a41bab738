/**
 * Folder and file rows as the items of result documents: the one mapper, for listings and for the
 * tree's records alike. Built as literals of one shape, without spreads: a listing builds 100,000.
 */
import type { BinAttributes, FileItem, FolderItem, ShareAttributes } from '../../../catalog/results';

interface ItemRow {
  id: number;
  name: string;
  size: number;
  updated_at: number;
  shared: number;
  linked: number;
  encrypted: number;
  /** The hint of the item's key, where the query reads it (encryption-repository): "" when absent. */
  tip?: string | null;
}

export interface FolderItemRow extends ItemRow {
  parent_id: number;
  /** How far a running encryption or decryption job of the folder has got. */
  progress?: number | null;
}

export interface FileItemRow extends ItemRow {
  folder_id: number;
  ext: string;
  sha256: string;
}

/** What some listings add to an item. */
export interface Extras {
  readonly path?: string;
  readonly bin?: BinAttributes;
  readonly share?: ShareAttributes;
  readonly link?: { readonly url: string; readonly hits: number };
}

export const NO_EXTRAS: Extras = {};

// `time` is the last modification (creation, rename, content); `tip` only on encrypted items (DECISIONS.md §2).
export const toFolderItem = (row: FolderItemRow, extras: Extras = NO_EXTRAS): FolderItem => ({
  type: 'folder',
  id: row.id,
  dir: row.parent_id,
  name: row.name,
  size: row.size,
  time: new Date(row.updated_at),
  shared: row.shared === 1,
  linked: row.linked === 1,
  encrypted: row.encrypted === 1,
  tip: row.encrypted === 1 ? (row.tip ?? '') : undefined,
  progress: row.progress == null ? undefined : Number(row.progress),
  path: extras.path,
  bin: extras.bin,
  share: extras.share,
  link: extras.link,
});

export const toFileItem = (row: FileItemRow, extras: Extras = NO_EXTRAS): FileItem => ({
  type: 'file',
  id: row.id,
  dir: row.folder_id,
  name: row.name,
  ext: row.ext,
  size: row.size,
  hash: row.sha256,
  time: new Date(row.updated_at),
  shared: row.shared === 1,
  linked: row.linked === 1,
  encrypted: row.encrypted === 1,
  tip: row.encrypted === 1 ? (row.tip ?? '') : undefined,
  path: extras.path,
  bin: extras.bin,
  share: extras.share,
  link: extras.link,
});
