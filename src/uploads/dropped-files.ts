/** Files from a drop or a folder picker, each with its folders, plus every folder (empty ones too, where the browser tells). */
import type { TreeFile } from './upload-queue';

export interface DroppedTree {
  readonly files: TreeFile[];
  readonly dirs: string[][];
}

/** Takes what the drop holds now (a DataTransfer is readable only during its event); entries missing, falls back to `files`. */
export function captureDrop(dataTransfer: DataTransfer): () => Promise<DroppedTree> {
  const entries: FileSystemEntry[] = [];
  const loose: File[] = [];
  const items = dataTransfer.items ? Array.from(dataTransfer.items) : [];
  const fileItems = items.filter((item) => item.type === 'file');
  if (fileItems.length > 0) {
    for (const item of fileItems) {
      const entry = typeof item.webkitGetAsEntry === 'function' ? item.webkitGetAsEntry() : null;
      if (entry) entries.push(entry);
      else {
        const file = item.getAsFile();
        if (file) loose.push(file);
      }
    }
  } else {
    loose.push(...Array.from(dataTransfer.files ?? []));
  }

  return async () => {
    const tree: DroppedTree = { files: loose.map((source) => ({ source, dirs: [] })), dirs: [] };
    for (const entry of entries) await walk(entry, [], tree);
    return tree;
  };
}

async function walk(entry: FileSystemEntry, dirs: readonly string[], tree: DroppedTree): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    tree.files.push({ source: file, dirs });
    return;
  }
  if (!entry.isDirectory) return;
  const path = [...dirs, entry.name];
  tree.dirs.push(path);
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  // readEntries answers in batches (100 in Chromium) until it answers an empty one.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    for (const child of batch) await walk(child, path, tree);
  }
}

/** The files of an `<input type="file" webkitdirectory>`: each carries its path in webkitRelativePath. */
export function treeFromPicked(files: Iterable<File>): DroppedTree {
  const tree: DroppedTree = { files: [], dirs: [] };
  const seen = new Set<string>();
  for (const file of files) {
    const parts = (file.webkitRelativePath || file.name).split('/').filter(Boolean);
    const dirs = parts.slice(0, -1);
    tree.files.push({ source: file, dirs });
    for (let depth = 1; depth <= dirs.length; depth++) {
      const key = dirs.slice(0, depth).join('/');
      if (!seen.has(key)) {
        seen.add(key);
        tree.dirs.push(dirs.slice(0, depth));
      }
    }
  }
  return tree;
}
