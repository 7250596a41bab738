/**
 * The content store in an S3-compatible bucket (FSS_S3_BUCKET), with the local store's keys under `<prefix>content/`
 * so rows stay valid when blobs are copied between stores. Objects appear whole (PutObject or multipart); parts carry
 * Content-MD5, and the SDK's CRC trailers are off because many S3-compatible stores reject them
 * (docs/uploads-and-downloads.md, "S3"). Bodies are streamed, never buffered.
 */
import { createHash } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
  type CompletedPart,
  type CompletedMultipartUpload,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import type { S3Settings } from '../../config';
import { fromDependency, type DependencyOutages } from '../outages';
import {
  ContentMissingError,
  InvalidStorageKeyError,
  isDerivedKey,
  isStorageKey,
  storageKeyFor,
  type BlobStat,
  type ByteRange,
  type ContentStore,
} from './content-store';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
/** S3's limits: parts of 5 MiB at least (but the last), 10,000 parts, 5 GiB in one PUT or copy. */
export const S3_MIN_PART_SIZE = 5 * MiB;
const S3_MAX_PARTS = 10_000;
const S3_MAX_SINGLE_COPY = 5 * GiB;
/** Most connections one instance holds to the store: every download in flight holds one. */
const MAX_SOCKETS = 1024;

export interface S3StoreOptions {
  /** Files larger than this go up as a multipart upload, in parts of this size (at least 5 MiB). */
  readonly partSize?: number;
  /** Objects larger than this are copied part by part (UploadPartCopy); at most S3's 5 GiB. */
  readonly maxSingleCopyBytes?: number;
  /** Size of the parts of such a copy (at least 5 MiB). */
  readonly copyPartSize?: number;
  /** Parts in flight at once, per write. */
  readonly partConcurrency?: number;
  /** The client's idle limit (S3ClientOptions.idleTimeoutMs), lifted while a body read waits for its reader. */
  readonly idleTimeoutMs?: number;
}

/** How a client waits for the store, and where it reports whether the store answers (storage/outages.ts). */
export interface S3ClientOptions {
  /** Opening a connection (FSS_CONNECT_TIMEOUT_SECONDS); default 5 s. */
  readonly connectTimeoutMs?: number;
  /** Longest silence on a request's connection, before the answer and between its body's bytes (FSS_STORE_TIMEOUT_SECONDS); 0 = none. */
  readonly idleTimeoutMs?: number;
  readonly outages?: DependencyOutages;
}

/** The AWS SDK settings for a bucket (also handed to @tus/s3-store, which builds its own client). */
export function s3ClientConfig(settings: S3Settings, options: S3ClientOptions = {}): S3ClientConfig {
  return {
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    ...(settings.accessKeyId && settings.secretAccessKey
      ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
      : {}),
    // Checksums only where S3 requires them (DeleteObjects): streamed bodies with trailing
    // checksums are what many S3-compatible stores reject or, worse, store as data.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler: {
      connectionTimeout: options.connectTimeoutMs ?? 5_000,
      // An idle limit, not a total: a download streams for as long as its client reads it (read() lifts the limit
      // while the client makes it wait), and S3 keeps a long copy's connection busy with whitespace.
      ...(options.idleTimeoutMs ? { socketTimeout: options.idleTimeoutMs } : {}),
      httpAgent: new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
      httpsAgent: new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
    },
  };
}

export function createS3Client(settings: S3Settings, options: S3ClientOptions = {}): S3Client {
  const client = new S3Client(s3ClientConfig(settings, options));
  if (options.outages) watchStore(client, options.outages);
  return client;
}

/**
 * Marks the errors of `client`'s calls as the store's (after the SDK's retries) and notes every answer below 500 as
 * proof that the store is reached: what storage/outages.ts reads to tell an outage from a bug.
 */
export function watchStore(client: { middlewareStack: S3Client['middlewareStack'] }, outages: DependencyOutages): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        const output = await next(args);
        outages.reached('store');
        return output;
      } catch (error) {
        const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
        if (status !== undefined && status < 500) outages.reached('store');
        throw fromDependency('store', error);
      }
    },
    { step: 'initialize', name: 'fssOutages' },
  );
}

export class S3ContentStore implements ContentStore {
  private readonly partSize: number;
  private readonly maxSingleCopyBytes: number;
  private readonly copyPartSize: number;
  private readonly partConcurrency: number;
  private readonly idleTimeoutMs: number;

  constructor(
    readonly client: S3Client,
    readonly bucket: string,
    /** '' or a prefix ending in '/' (config.ts). */
    readonly prefix: string,
    options: S3StoreOptions = {},
  ) {
    this.partSize = Math.max(S3_MIN_PART_SIZE, options.partSize ?? 16 * MiB);
    this.maxSingleCopyBytes = Math.min(S3_MAX_SINGLE_COPY, options.maxSingleCopyBytes ?? S3_MAX_SINGLE_COPY);
    this.copyPartSize = Math.max(S3_MIN_PART_SIZE, options.copyPartSize ?? 512 * MiB);
    this.partConcurrency = Math.max(1, options.partConcurrency ?? 4);
    this.idleTimeoutMs = options.idleTimeoutMs ?? 0;
  }

  get contentPrefix(): string {
    return `${this.prefix}content/`;
  }

  newKey(sha256: string): string {
    return storageKeyFor(sha256);
  }

  async putFile(key: string, sourcePath: string): Promise<void> {
    const objectKey = this.objectKeyOf(key);
    await this.refuseExisting(key, objectKey);
    const { size } = await fs.stat(sourcePath);
    if (size <= this.partSize) {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: objectKey,
          Body: size === 0 ? Buffer.alloc(0) : createReadStream(sourcePath),
          ContentLength: size,
          ContentMD5: await md5Of(sourcePath, 0, size),
          ContentType: 'application/octet-stream',
        }),
      );
    } else {
      const partSize = Math.max(this.partSize, Math.ceil(size / S3_MAX_PARTS));
      await this.multipart(objectKey, size, partSize, async (uploadId, partNumber, start, end) => {
        const answer = await this.client.send(
          new UploadPartCommand({
            Bucket: this.bucket,
            Key: objectKey,
            UploadId: uploadId,
            PartNumber: partNumber,
            Body: createReadStream(sourcePath, { start, end }),
            ContentLength: end - start + 1,
            ContentMD5: await md5Of(sourcePath, start, end + 1),
          }),
        );
        return answer.ETag;
      });
    }
    await fs.rm(sourcePath, { force: true });
  }

  /** Copies object `sourceObjectKey` (`size` bytes) under `key` inside the bucket (CopyObject, part by part beyond 5 GiB). */
  async copyObjectInto(key: string, sourceObjectKey: string, size: number): Promise<void> {
    const objectKey = this.objectKeyOf(key);
    await this.refuseExisting(key, objectKey);
    const copySource = `${this.bucket}/${sourceObjectKey.split('/').map(encodeURIComponent).join('/')}`;
    if (size <= this.maxSingleCopyBytes) {
      await this.client.send(
        new CopyObjectCommand({ Bucket: this.bucket, Key: objectKey, CopySource: copySource, ContentType: 'application/octet-stream', MetadataDirective: 'REPLACE' }),
      );
    } else {
      const partSize = Math.max(this.copyPartSize, Math.ceil(size / S3_MAX_PARTS));
      await this.multipart(objectKey, size, partSize, async (uploadId, partNumber, start, end) => {
        const answer = await this.client.send(
          new UploadPartCopyCommand({
            Bucket: this.bucket,
            Key: objectKey,
            UploadId: uploadId,
            PartNumber: partNumber,
            CopySource: copySource,
            CopySourceRange: `bytes=${start}-${end}`,
          }),
        );
        return answer.CopyPartResult?.ETag;
      });
    }
    const copied = await this.stat(key);
    if (copied?.size !== size) {
      await this.delete(key);
      throw new Error(`copying ${sourceObjectKey} to ${key} gave ${copied?.size ?? 'no'} bytes, not ${size}`);
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const objectKey = this.objectKeyOf(key);
    let answer;
    try {
      answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: objectKey, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
    } catch (error) {
      if (isNotFound(error)) throw new ContentMissingError(key);
      throw error;
    }
    const body = answer.Body as Readable | undefined;
    if (!body) throw new Error(`the store answered no body for ${key}`);
    if (this.idleTimeoutMs) idleOnlyWhileRead(body, this.idleTimeoutMs);
    // A store that ignored the range would send the wrong bytes as if they were the right ones.
    if (range && !answer.ContentRange?.startsWith(`bytes ${range.start}-${range.end}/`)) {
      body.destroy();
      throw new Error(`the store answered ${answer.ContentRange ?? 'the whole object'} for bytes ${range.start}-${range.end} of ${key}`);
    }
    return body;
  }

  async stat(key: string): Promise<BlobStat | null> {
    const size = await this.objectSize(this.objectKeyOf(key));
    return size === null ? null : { size };
  }

  async delete(key: string): Promise<void> {
    // S3 answers a deletion of a missing key with success.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKeyOf(key) }));
  }

  async *listKeys(): AsyncIterable<string> {
    const prefix = this.contentPrefix;
    for await (const object of this.listObjects(prefix)) {
      const key = object.key.slice(prefix.length);
      if (isStorageKey(key)) yield key;
    }
  }

  async putDerived(key: string, bytes: Buffer): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKeyOf(key), Body: bytes, ContentType: 'application/octet-stream' }));
  }

  async *listDerivedKeys(sha256?: string): AsyncIterable<string> {
    const prefix = this.contentPrefix;
    const under = sha256 ? `derived/${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}-` : 'derived/';
    for await (const object of this.listObjects(`${prefix}${under}`)) {
      const key = object.key.slice(prefix.length);
      if (isDerivedKey(key)) yield key;
    }
  }

  async sweepPartialWrites(before: Date): Promise<number> {
    let removed = 0;
    for await (const upload of this.listMultipartUploads(this.contentPrefix)) {
      if (upload.initiated.getTime() >= before.getTime()) continue;
      await this.abortMultipart(upload.key, upload.uploadId);
      removed++;
    }
    return removed;
  }

  // ---- For this folder's S3 modules (s3-upload-area.ts) --------------------------------------

  /** The size of object `objectKey`; null when there is none. */
  async objectSize(objectKey: string): Promise<number | null> {
    try {
      const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      return answer.ContentLength ?? 0;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** Every object under `prefix`, page by page (1,000 a request). */
  async *listObjects(prefix: string): AsyncIterable<{ readonly key: string; readonly size: number; readonly lastModified: Date }> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const object of page.Contents ?? []) {
        if (object.Key) yield { key: object.Key, size: object.Size ?? 0, lastModified: object.LastModified ?? new Date(0) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** Every unfinished multipart upload under `prefix`. */
  async *listMultipartUploads(prefix: string): AsyncIterable<{ readonly key: string; readonly uploadId: string; readonly initiated: Date }> {
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await this.client.send(
        new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
      );
      for (const upload of page.Uploads ?? []) {
        if (upload.Key && upload.UploadId) yield { key: upload.Key, uploadId: upload.UploadId, initiated: upload.Initiated ?? new Date(0) };
      }
      if (!page.IsTruncated) return;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  /** Aborts a multipart upload; one that is already gone (completed or aborted) is fine. */
  async abortMultipart(objectKey: string, uploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: objectKey, UploadId: uploadId }));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  // ---- Internals ------------------------------------------------------------------------------

  /** The object of a key; refuses anything not of the key form. */
  private objectKeyOf(key: string): string {
    if (!isStorageKey(key) && !isDerivedKey(key)) throw new InvalidStorageKeyError(key);
    return `${this.contentPrefix}${key}`;
  }

  private async refuseExisting(key: string, objectKey: string): Promise<void> {
    // Keys are new for every write (content-store.ts); this only guards against a caller's mistake.
    if ((await this.objectSize(objectKey)) !== null) throw new Error(`storage key already holds content: ${key}`);
  }

  /** One multipart upload of `size` bytes, `partConcurrency` parts at a time; aborted on any failure. */
  private async multipart(
    objectKey: string,
    size: number,
    partSize: number,
    sendPart: (uploadId: string, partNumber: number, start: number, end: number) => Promise<string | undefined>,
  ): Promise<void> {
    const created = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: objectKey, ContentType: 'application/octet-stream' }),
    );
    const uploadId = created.UploadId;
    if (!uploadId) throw new Error(`the store gave no upload id for ${objectKey}`);
    try {
      const count = Math.ceil(size / partSize);
      const parts: CompletedPart[] = new Array(count);
      let next = 0;
      const worker = async () => {
        while (next < count) {
          const index = next++;
          const start = index * partSize;
          const end = Math.min(size, start + partSize) - 1;
          const etag = await sendPart(uploadId, index + 1, start, end);
          if (!etag) throw new Error(`the store gave no ETag for part ${index + 1} of ${objectKey}`);
          parts[index] = { PartNumber: index + 1, ETag: etag };
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.partConcurrency, count) }, worker));
      const upload: CompletedMultipartUpload = { Parts: parts };
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: objectKey, UploadId: uploadId, MultipartUpload: upload }));
    } catch (error) {
      await this.abortMultipart(objectKey, uploadId).catch(() => {});
      throw error;
    }
  }
}

/**
 * The idle limit of a body's connection applies while it is read: a client that makes the download wait (its
 * window full, a paused browser) pauses the body, and silence then is the client's, not the store's.
 */
function idleOnlyWhileRead(body: Readable, limit: number): void {
  const message = body as Readable & { complete?: boolean; socket?: { setTimeout(ms: number): unknown } };
  const socket = message.socket;
  if (!socket) return;
  // Once the body has arrived whole, its socket may serve another request: leave it alone.
  body.on('pause', () => message.complete || socket.setTimeout(0));
  body.on('resume', () => message.complete || socket.setTimeout(limit));
}

/** Whether an SDK error says that the object (or the multipart upload) is not there. */
export function isNotFound(error: unknown): boolean {
  const e = error as { name?: unknown; Code?: unknown; $metadata?: { httpStatusCode?: number } } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'NoSuchBucket' || e.Code === 'NoSuchBucket') return false;
  return ['NotFound', 'NoSuchKey', 'NoSuchUpload'].includes(String(e.name ?? e.Code)) || e.$metadata?.httpStatusCode === 404;
}

/** The base64 MD5 of bytes [start, end) of a file, as Content-MD5 wants it (read as a stream). */
async function md5Of(file: string, start: number, end: number): Promise<string> {
  const hash = createHash('md5');
  if (end > start) {
    for await (const chunk of createReadStream(file, { start, end: end - 1, highWaterMark: MiB })) hash.update(chunk as Buffer);
  }
  return hash.digest('base64');
}
