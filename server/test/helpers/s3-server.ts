/**
 * An S3-compatible server for tests: s3rver (files in a temporary folder) on 127.0.0.1 and a free
 * port, with one bucket, plus what s3rver 3.7.1 lacks and the service uses, added here rather than
 * worked around in the product:
 * - ListParts, AbortMultipartUpload and ListMultipartUploads (405/501 in s3rver): @tus/s3-store
 *   lists the parts of every upload it resumes, and sweeps abort unfinished multipart uploads;
 * - UploadPartCopy (501 in s3rver): copies of finished uploads over the single-copy limit;
 * - CompleteMultipartUpload checks S3's rules, which s3rver does not: every part but the last at
 *   least 5 MiB (EntityTooSmall), each part's ETag the one it was given (InvalidPart);
 * - a PUT (object or part) with a Content-MD5 that is not the MD5 of the bytes is refused
 *   (BadDigest), as S3 refuses it (s3rver ignores the header; here the bytes are kept all the same);
 * - a ranged GET whose last byte is 0 (`bytes=0-0`) answers that byte, not the whole object.
 * docs/uploads-and-downloads.md ("S3") lists what this server still does not show of real S3.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, promises as fs, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { S3Settings } from '../../src/config';

const require = createRequire(import.meta.url);

/** What this harness uses of s3rver (it ships no types). */
interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | undefined>;
  headers: Record<string, string | undefined>;
  status: number;
  body: unknown;
  etag: string;
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;
interface S3rverObject {
  content: Readable | null;
  metadata: Record<string, string>;
  range?: { start: number; end: number };
}
interface FilesystemStore {
  rootDirectory: string;
  getMetadata(bucket: string, key: string): Promise<Record<string, string | number>>;
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  getObject(bucket: string, key: string, options?: { start?: number; end?: number }): Promise<S3rverObject | null>;
  putPart(bucket: string, uploadId: string, partNumber: number, content: Readable): Promise<{ size: number; md5: string }>;
  putObjectMultipart(bucket: string, uploadId: string, parts: Array<{ number: number; etag: string }>): Promise<unknown>;
}
interface S3rverInstance {
  middleware: Middleware[];
  store: FilesystemStore;
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
type S3ErrorClass = new (code: string, message?: string, detail?: Record<string, unknown>) => Error;
type S3ObjectClass = new (bucket: string, key: string, content: Readable | null, metadata: Record<string, unknown>) => S3rverObject;

const S3rver = require('s3rver') as S3rverClass;
const S3Error = require('s3rver/lib/models/error.js') as S3ErrorClass;
const S3Object = require('s3rver/lib/models/object.js') as S3ObjectClass;

const MiB = 1024 * 1024;

export interface TestS3Server {
  readonly endpoint: string;
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
  /** Makes the server hang: it reads requests but answers none until the returned function is called. */
  hold(): () => void;
  close(): Promise<void>;
}

/** The connection facts of a running server (what globalSetup hands to the test workers). */
export type TestS3Endpoint = Omit<TestS3Server, 'close' | 'hold'>;

/** Settings for the service on this server, under a prefix of its own (so tests never see each other's objects). */
export function testS3Settings(server: TestS3Endpoint, prefix = `test-${randomBytes(6).toString('hex')}/`): S3Settings {
  return {
    endpoint: server.endpoint,
    bucket: server.bucket,
    region: server.region,
    accessKeyId: server.accessKeyId,
    secretAccessKey: server.secretAccessKey,
    forcePathStyle: true,
    prefix,
  };
}

export async function startTestS3Server(options: { readonly minPartSize?: number } = {}): Promise<TestS3Server> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'fss-s3-'));
  const bucket = 'fss-test';
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  patchStore(server.store, options.minPartSize ?? 5 * MiB);
  // Before s3rver's router (the last middleware): requests the shim answers never reach it.
  server.middleware.splice(server.middleware.length - 1, 0, shim(server.store));
  let held: Promise<void> | null = null;
  server.middleware.unshift(async (_ctx, next) => {
    if (held) await held;
    await next();
  });
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    region: 'us-east-1',
    hold() {
      let release = () => {};
      held = new Promise<void>((resolve) => (release = resolve));
      return () => {
        held = null;
        release();
      };
    },
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

function patchStore(store: FilesystemStore, minPartSize: number): void {
  // s3rver reads `end: options.end || Infinity`, so that bytes=0-0 gives the whole object.
  store.getObject = async (bucket, key, options) => {
    let metadata;
    try {
      metadata = await store.getMetadata(bucket, key);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const size = Number(metadata['content-length']);
    const ranged = options !== undefined && (options.start !== undefined || options.end !== undefined);
    const start = options?.start ?? 0;
    const end = Math.min(options?.end ?? Infinity, size - 1);
    if (ranged && (start < 0 || start > end)) {
      const object = new S3Object(bucket, key, null, metadata);
      object.range = { start, end };
      return object;
    }
    const content = size === 0 ? Readable.from([]) : createReadStream(store.getResourcePath(bucket, key, 'object'), { start, end });
    const object = new S3Object(bucket, key, content, metadata);
    if (ranged) object.range = { start, end };
    return object;
  };

  const complete = store.putObjectMultipart.bind(store);
  store.putObjectMultipart = async (bucket, uploadId, parts) => {
    const dir = uploadDir(store, bucket, uploadId);
    const sorted = [...parts].sort((a, b) => a.number - b.number);
    for (const [index, part] of sorted.entries()) {
      const file = path.join(dir, String(part.number));
      const stats = await fs.stat(file).catch(() => null);
      const md5 = await fs.readFile(`${file}.md5`, 'utf8').catch(() => null);
      if (!stats || md5 !== part.etag) throw new S3Error('InvalidPart', 'One or more of the specified parts could not be found.', { PartNumber: part.number });
      if (index < sorted.length - 1 && stats.size < minPartSize) {
        throw new S3Error('EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.', { PartNumber: part.number });
      }
    }
    return complete(bucket, uploadId, parts);
  };
}

function uploadDir(store: FilesystemStore, bucket: string, uploadId: string): string {
  if (!/^[0-9a-zA-Z_-]+$/.test(uploadId)) throw new S3Error('NoSuchUpload', 'The specified upload does not exist.');
  return path.join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
}

async function uploadExists(store: FilesystemStore, bucket: string, uploadId: string, key?: string): Promise<boolean> {
  try {
    const recorded = await fs.readFile(path.join(uploadDir(store, bucket, uploadId), 'key'), 'utf8');
    return key === undefined || recorded === key;
  } catch {
    return false;
  }
}

const noSuchUpload = () => new S3Error('NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.');

function shim(store: FilesystemStore): Middleware {
  return async (ctx, next) => {
    const [bucket, ...rest] = ctx.path.slice(1).split('/');
    const key = rest.map(decodeURIComponent).join('/');
    const uploadId = ctx.query.uploadId;

    if (ctx.method === 'GET' && key === '' && 'uploads' in ctx.query) {
      ctx.body = await listMultipartUploads(store, bucket, ctx.query.prefix ?? '');
      return;
    }
    const md5 = ctx.headers['content-md5'];
    if (ctx.method === 'PUT' && key !== '' && md5 !== undefined && ctx.headers['x-amz-copy-source'] === undefined) {
      await next();
      const stored = String(ctx.etag ?? '').replace(/"/g, '');
      if (Buffer.from(md5, 'base64').toString('hex') !== stored) throw new S3Error('BadDigest', 'The Content-MD5 you specified did not match what we received.');
      return;
    }
    if (key === '' || uploadId === undefined) return next();

    if (ctx.method === 'GET') {
      if (!(await uploadExists(store, bucket, uploadId, key))) throw noSuchUpload();
      ctx.body = await listParts(store, bucket, key, uploadId, Number(ctx.query['part-number-marker'] ?? 0), Number(ctx.query['max-parts'] ?? 1000));
      return;
    }
    if (ctx.method === 'DELETE') {
      if (!(await uploadExists(store, bucket, uploadId, key))) throw noSuchUpload();
      await fs.rm(uploadDir(store, bucket, uploadId), { recursive: true, force: true });
      ctx.status = 204;
      ctx.body = '';
      return;
    }
    if (ctx.method === 'PUT' && ctx.headers['x-amz-copy-source'] !== undefined) {
      if (!(await uploadExists(store, bucket, uploadId, key))) throw noSuchUpload();
      const [sourceBucket, ...sourceKey] = decodeURIComponent(ctx.headers['x-amz-copy-source'].replace(/^\//, '')).split('/');
      const range = /^bytes=(\d+)-(\d+)$/.exec(ctx.headers['x-amz-copy-source-range'] ?? '');
      const source = await store.getObject(sourceBucket, sourceKey.join('/'), range ? { start: Number(range[1]), end: Number(range[2]) } : undefined);
      if (!source) throw new S3Error('NoSuchKey', 'The specified key does not exist.');
      if (!source.content) throw new S3Error('InvalidRange', 'The requested range is not satisfiable');
      const { md5 } = await store.putPart(bucket, uploadId, Number(ctx.query.partNumber), source.content);
      ctx.body = { CopyPartResult: { ETag: JSON.stringify(md5), LastModified: new Date().toISOString() } };
      return;
    }
    return next();
  };
}

async function listParts(store: FilesystemStore, bucket: string, key: string, uploadId: string, marker: number, maxParts: number) {
  const dir = uploadDir(store, bucket, uploadId);
  const numbers = (await fs.readdir(dir))
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((number) => number > marker)
    .sort((a, b) => a - b);
  const page = numbers.slice(0, maxParts);
  const parts = [];
  for (const number of page) {
    const file = path.join(dir, String(number));
    const [stats, md5] = await Promise.all([fs.stat(file), fs.readFile(`${file}.md5`, 'utf8')]);
    parts.push({ PartNumber: number, LastModified: stats.mtime.toISOString(), ETag: JSON.stringify(md5), Size: stats.size });
  }
  const truncated = numbers.length > page.length;
  return {
    ListPartsResult: {
      Bucket: bucket,
      Key: key,
      UploadId: uploadId,
      PartNumberMarker: marker,
      ...(truncated ? { NextPartNumberMarker: page[page.length - 1] } : {}),
      MaxParts: maxParts,
      IsTruncated: truncated,
      ...(parts.length > 0 ? { Part: parts } : {}),
    },
  };
}

async function listMultipartUploads(store: FilesystemStore, bucket: string, prefix: string) {
  const root = store.getResourcePath(bucket, undefined, 'uploads');
  const uploads = [];
  for (const uploadId of await fs.readdir(root).catch(() => [] as string[])) {
    const file = path.join(root, uploadId, 'key');
    const key = await fs.readFile(file, 'utf8').catch(() => null);
    if (key === null || !key.startsWith(prefix)) continue;
    const stats = await fs.stat(file);
    uploads.push({ Key: key, UploadId: uploadId, Initiated: stats.mtime.toISOString(), StorageClass: 'STANDARD' });
  }
  uploads.sort((a, b) => (a.Key === b.Key ? a.UploadId.localeCompare(b.UploadId) : a.Key < b.Key ? -1 : 1));
  return {
    ListMultipartUploadsResult: {
      Bucket: bucket,
      Prefix: prefix,
      MaxUploads: 1000,
      IsTruncated: false,
      ...(uploads.length > 0 ? { Upload: uploads } : {}),
    },
  };
}
