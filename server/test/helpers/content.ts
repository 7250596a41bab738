/**
 * Which content store the tests run on: FSS_TEST_CONTENT=s3 (set by the "s3" project in
 * vitest.config.ts) puts content and unfinished uploads in an S3-compatible server
 * (helpers/s3-server.ts), else the local disk (the embedded default). app-server.ts and
 * database.ts ask here.
 *
 * The "s3" project's global setup (server/test/s3-global-setup.ts) starts one server per run,
 * outside the test workers (so that the memory tests measure the service, not the S3 server);
 * each configuration gets a key prefix of its own on it. Run outside that project,
 * FSS_TEST_CONTENT=s3 starts a server in the worker on first use.
 */
import { writeFile } from 'node:fs/promises';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { inject } from 'vitest';
import type { Config, S3Settings } from '../../src/config';
import { S3ContentStore } from '../../src/storage/content/s3-store';
import { S3UploadArea } from '../../src/storage/content/s3-upload-area';
import { contentStoreFor, uploadAreaFor } from '../../src/storage/content/stores';
import { LocalUploadArea, recordDurableOffset } from '../../src/storage/content/upload-area';
import { startTestS3Server, testS3Settings, type TestS3Endpoint, type TestS3Server } from './s3-server';

declare module 'vitest' {
  export interface ProvidedContext {
    fssS3: TestS3Endpoint | null;
  }
}

export type TestContent = 'local' | 's3';

/** The content store these tests run on (FSS_TEST_CONTENT). */
export function testContent(): TestContent {
  const content = process.env.FSS_TEST_CONTENT || 'local';
  if (content !== 'local' && content !== 's3') throw new Error(`FSS_TEST_CONTENT must be local or s3, got "${content}"`);
  return content;
}

let ownServer: Promise<TestS3Server> | undefined;

/** The S3 server of this run: the global setup's, else one started in this worker. */
export async function testS3Endpoint(): Promise<TestS3Endpoint> {
  const provided = providedS3();
  if (provided) return provided;
  ownServer ??= startTestS3Server();
  return ownServer;
}

function providedS3(): TestS3Endpoint | null {
  try {
    return inject('fssS3') ?? null;
  } catch {
    return null;
  }
}

/**
 * S3 settings for one test configuration (a fresh prefix) when the tests run on S3; undefined on
 * the local disk. Synchronous, for testConfig: it needs the global setup's server.
 */
export function testS3SettingsOrNone(): S3Settings | undefined {
  if (testContent() !== 's3') return undefined;
  const provided = providedS3();
  if (!provided) throw new Error('FSS_TEST_CONTENT=s3 needs the S3 server of the "s3" project (server/test/s3-global-setup.ts)');
  return testS3Settings(provided);
}

/** The environment that puts a service's content in S3 (a fresh prefix); {} on the local disk. */
export async function testContentEnv(): Promise<Record<string, string>> {
  if (testContent() !== 's3') return {};
  const settings = testS3Settings(await testS3Endpoint());
  return {
    FSS_S3_ENDPOINT: settings.endpoint ?? '',
    FSS_S3_BUCKET: settings.bucket,
    FSS_S3_REGION: settings.region,
    FSS_S3_ACCESS_KEY_ID: settings.accessKeyId ?? '',
    FSS_S3_SECRET_ACCESS_KEY: settings.secretAccessKey ?? '',
    FSS_S3_FORCE_PATH_STYLE: 'true',
    FSS_S3_PREFIX: settings.prefix,
  };
}

/**
 * Puts `data` in the upload area as the bytes of upload `id` whose last byte has arrived, as tus
 * leaves them when the server dies before completing it (the file on disk; the assembled object
 * in S3).
 */
export async function writeArrivedUpload(config: Config, id: string, data: Buffer): Promise<void> {
  const area = uploadAreaFor(config);
  if (area instanceof LocalUploadArea) {
    // As the last PATCH leaves them: written, synced, and their offset recorded as durable.
    await writeFile(area.dataPath(id), data);
    await recordDurableOffset(area.dataPath(id), data.length, { sync: true });
    return;
  }
  const store = contentStoreFor(config);
  if (!(area instanceof S3UploadArea) || !(store instanceof S3ContentStore)) throw new Error('an upload area of an unknown kind');
  await store.client.send(new PutObjectCommand({ Bucket: store.bucket, Key: area.objectKeyOf(id), Body: data }));
}

/** Whether the upload area holds anything of upload `id` (bytes, tus metadata, parts). */
export async function uploadAreaHolds(config: Config, id: string): Promise<boolean> {
  return (await uploadAreaFor(config).idsUntouchedSince(new Date(Date.now() + 3600_000))).includes(id);
}
