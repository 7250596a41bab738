/**
 * The staging folder of unfinished uploads, `<dataDir>/uploads/`. The tus endpoint
 * (protocol/uploads.ts, @tus/file-store) writes there; this module is how the rest of the server
 * finds and removes what it wrote, without knowing tus.
 *
 * Layout (that of @tus/file-store's FileStore with its default FileConfigstore): the bytes of
 * upload `<id>` are the file `<id>`, its tus metadata the file `<id>.json`. Ids are the hex ids the
 * upload endpoint generates; anything else in the folder is not an upload and is left alone.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config';

const UPLOAD_ID = /^[0-9a-f]{32}$/;

export class UploadArea {
  readonly directory: string;

  constructor(directory: string) {
    this.directory = path.resolve(directory);
  }

  /** Whether `id` has the form of an upload id (and so names a file inside the folder). */
  static isUploadId(id: string): boolean {
    return UPLOAD_ID.test(id);
  }

  /** The file holding the bytes of upload `id`. */
  dataPath(id: string): string {
    if (!UploadArea.isUploadId(id)) throw new Error('invalid upload id');
    return path.join(this.directory, id);
  }

  /** Removes what upload `id` left in the folder (its bytes, its tus metadata); idempotent. */
  async remove(id: string): Promise<void> {
    const data = this.dataPath(id);
    await fs.rm(data, { force: true });
    await fs.rm(`${data}.json`, { force: true });
  }

  /** Ids of the uploads with a file in the folder not modified since `before`. */
  async idsUntouchedSince(before: Date): Promise<string[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const newest = new Map<string, number>();
    for (const name of names) {
      const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : name;
      if (!UPLOAD_ID.test(id)) continue;
      const stats = await fs.stat(path.join(this.directory, name)).catch(() => null);
      if (!stats) continue;
      newest.set(id, Math.max(newest.get(id) ?? 0, stats.mtimeMs));
    }
    return [...newest].filter(([, mtime]) => mtime < before.getTime()).map(([id]) => id);
  }
}

export function uploadDirectory(config: Config): string {
  return path.join(config.dataDir, 'uploads');
}
