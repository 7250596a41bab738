/** Whether the content store of `config` can be reached (/readyz): its folder on the local disk, a HEAD in the bucket. */
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config';
import { storageKeyFor } from './content-store';
import { LocalDiskStore } from './local-disk-store';
import { contentStoreFor } from './stores';

/** Resolves when the store answers; rejects with the reason otherwise. */
export async function probeContentStore(config: Config): Promise<void> {
  const store = contentStoreFor(config);
  if (!(store instanceof LocalDiskStore)) {
    // A key no content has: the store answers "nothing there" (null) when it is reachable and allowed.
    await store.stat(storageKeyFor('0'.repeat(64)));
    return;
  }
  // The folder is made on the first write: before it, the data folder it goes in must be there.
  const folder = await fs.stat(store.root).then(
    () => store.root,
    (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? path.dirname(store.root) : Promise.reject(error)),
  );
  if (!(await fs.stat(folder)).isDirectory()) throw new Error(`${folder} is not a folder`);
  await fs.access(folder, constants.R_OK | constants.W_OK);
}
