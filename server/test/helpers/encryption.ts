/**
 * Sessions, stored files and content-store inspection for the encryption tests: real tokens (an
 * unlock is kept per token), real bytes in the content store (encryption reads and writes them).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createAccount } from '../../src/operations/accounts/accounts';
import type { AuthenticatedContext, Caller, FileItem, Services, TokenIssued } from '../../src/operations/context';
import { addFileRecord } from '../../src/operations/tree/file-records';
import { authenticate, login } from '../../src/operations/accounts/sessions';
import { S3ContentStore } from '../../src/storage/content/s3-store';
import { contentStoreFor } from '../../src/storage/content/stores';
import { callContext } from './database';
import { sha256Of, storeTestContent } from './stored-files';

export interface TestSession {
  readonly uid: number;
  readonly caller: Caller;
  readonly ctx: AuthenticatedContext;
}

/** Creates the account (unless it exists) and logs in: a session with a real token. */
export async function openSession(services: Services, name: string, options: { existing?: boolean } = {}): Promise<TestSession> {
  const password = `${name}-password-1`;
  if (!options.existing) await createAccount(services, { name, password });
  const issued = (await login(callContext(services), { uid: name, pwd: password })) as TokenIssued;
  if (issued.kind !== 'token') throw new Error(`login of ${name} refused`);
  // The session's context serves many direct calls: without the version one token check read
  // (Caller.accountVersion is a single call's), each call's checks read the account's as it is.
  const { accountVersion: _oneCallsVersion, ...caller } = (await authenticate(services, BigInt(issued.uid), issued.token)).caller;
  return { uid: caller.uid, caller, ctx: callContext(services, caller) };
}

/** The parameters every signed call carries; the pipeline has checked them. */
export function signed<T extends object>(session: TestSession, params: T) {
  return { uid: BigInt(session.uid), token: session.caller.token, sign: 'checked', ...params };
}

/** A file of the session's account in `folderId` with these bytes, stored in the content store once per hash. */
export async function storeFile(services: Services, session: TestSession, folderId: number, name: string, bytes: string | Buffer): Promise<FileItem> {
  const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  const sha256 = sha256Of(data);
  const existing = await services.db.selectFrom('content').select('id').where('sha256', '=', sha256).where('encrypted', '=', 0).executeTakeFirst();
  const contentId = existing?.id ?? (await storeTestContent(services, data)).contentId;
  const dot = name.lastIndexOf('.');
  return services.db
    .transaction()
    .execute((tx) =>
      addFileRecord(tx, services, session.uid, {
        name,
        ext: dot > 0 ? name.slice(dot + 1).toLowerCase() : '',
        size: data.length,
        folderId,
        sha256,
        claimContent: async () => ({ contentId, keyId: null }),
      }),
    );
}

/**
 * Every file under `<dataDir>/content` (blobs and temporary files), read whole; with content in
 * S3, every object of the configuration's prefix (blobs, uploads, anything else).
 */
export async function contentStoreFiles(services: Services): Promise<Array<{ path: string; bytes: Buffer }>> {
  const store = contentStoreFor(services.config);
  if (store instanceof S3ContentStore) {
    const objects: Array<{ path: string; bytes: Buffer }> = [];
    for await (const object of store.listObjects(store.prefix)) {
      const answer = await store.client.send(new GetObjectCommand({ Bucket: store.bucket, Key: object.key }));
      objects.push({ path: object.key, bytes: Buffer.from((await answer.Body?.transformToByteArray()) ?? []) });
    }
    return objects;
  }
  const root = path.join(services.config.dataDir, 'content');
  const found: Array<{ path: string; bytes: Buffer }> = [];
  const walk = async (dir: string) => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else found.push({ path: full, bytes: await fs.readFile(full) });
    }
  };
  await walk(root);
  return found;
}

/** Whether any file of the content store holds `marker` (a grep of the whole store). */
export async function contentStoreHolds(services: Services, marker: string | Buffer): Promise<boolean> {
  const needle = typeof marker === 'string' ? Buffer.from(marker) : marker;
  return (await contentStoreFiles(services)).some((file) => file.bytes.includes(needle));
}

/** Bytes whose every 64 KiB chunk differs, with a marker at the start, for range tests. */
export function patternedBytes(size: number, marker = 'MARKER'): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + Math.floor(i / 65536) * 7) & 0xff;
  Buffer.from(marker).copy(bytes, 0);
  return bytes;
}
