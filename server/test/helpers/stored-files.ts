/**
 * Accounts, content and file rows made directly in the database, for tests of uploads, downloads
 * and content removal (the operations that create records are tested on their own).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { extensionOf, nameKey, naturalSortKey } from '../../src/operations/tree/names';
import type { Services } from '../../src/operations/context';
import { beginUpload } from '../../src/operations/content/uploads';
import { contentStoreFor, localUploadAreaFor } from '../../src/storage/content/stores';
import { testContent, writeArrivedUpload } from './content';

export const sha256Of = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

export async function insertTestAccount(services: Services, name: string, quotaBytes = 10 * 1024 ** 3): Promise<number> {
  const row = await services.db
    .insertInto('accounts')
    .values({ name, name_key: name.toLowerCase(), password_hash: 'x', quota_bytes: quotaBytes, created_at: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Bytes put into the content store with their content row, as a completed upload leaves them. */
export async function storeTestContent(services: Services, bytes: string | Buffer): Promise<{ contentId: number; sha256: string; key: string; size: number }> {
  const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  const sha256 = sha256Of(data);
  const store = contentStoreFor(services.config);
  const staging = path.join(services.config.dataDir, 'staging');
  await mkdir(staging, { recursive: true });
  const source = path.join(staging, randomBytes(8).toString('hex'));
  await writeFile(source, data);
  const key = store.newKey(sha256);
  await store.putFile(key, source);
  const row = await services.db
    .insertInto('content')
    .values({ sha256, size: data.length, storage_key: key, created_at: services.now().getTime() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { contentId: row.id, sha256, key, size: data.length };
}

export async function insertTestFile(
  services: Services,
  file: { accountId: number; name: string; contentId: number; sha256: string; size: number; folderId?: number; deletedAt?: number; binnedUnder?: number },
): Promise<number> {
  const row = await services.db
    .insertInto('files')
    .values({
      account_id: file.accountId,
      folder_id: file.folderId ?? 0,
      name: file.name,
      name_key: nameKey(file.name),
      sort_key: naturalSortKey(file.name),
      ext: extensionOf(file.name),
      sha256: file.sha256,
      size: file.size,
      content_id: file.contentId,
      created_at: 0,
      updated_at: 0,
      deleted_at: file.deletedAt ?? null,
      binned_under: file.binnedUnder ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** An upload created for the account whose bytes have all arrived in the upload area, as tus leaves them. */
export async function stageTestUpload(services: Services, accountId: number, bytes: string | Buffer): Promise<string> {
  const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  const id = randomBytes(16).toString('hex');
  await beginUpload(services, accountId, id, data.length);
  if (testContent() === 's3') {
    await writeArrivedUpload(services.config, id, data);
    return id;
  }
  const area = localUploadAreaFor(services.config);
  await mkdir(area.directory, { recursive: true });
  await writeFile(area.dataPath(id), data);
  await writeFile(`${area.dataPath(id)}.json`, JSON.stringify({ id, size: data.length, offset: 0 }));
  return id;
}
