/**
 * Unfinished uploads in the bucket, written by @tus/s3-store under `<prefix>uploads/`, so any instance can take the
 * next PATCH. A finished `<id>` is copied inside the store to its content key: the bytes never pass through again.
 */
import { Readable } from 'node:stream';
import { DeleteObjectsCommand, GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { S3Store, type MetadataValue } from '@tus/s3-store';
import type { DataStore, KvStore, Upload } from '@tus/server';
import { HashingDataStore, RunningHashes, sha256OfUpload } from './running-hashes';
import { isNotFound, s3ClientConfig, watchStore, type S3ClientOptions, type S3ContentStore } from './s3-store';
import { isUploadId, type UploadArea } from './upload-area';
import { uploadWith, WrappingDataStore } from './wrapping-data-store';
import type { S3Settings } from '../../config';
import { Lru } from '../../lru';

/** Upload records one instance keeps in memory (they never change once written). */
const CACHED_UPLOADS = 2_000;
const MiB = 1024 * 1024;

export class S3UploadArea implements UploadArea {
  /** tus' upload records, shared by the datastores of this area (bounded: tus' own cache is not). */
  private readonly cache = new BoundedKvStore<MetadataValue>(CACHED_UPLOADS);
  /** The SHA-256 of uploads being written through this instance's datastores. */
  readonly runningHashes = new RunningHashes();
  /** Uploads are written as they come; one for an encrypted folder is encrypted by a job after FileAdd. */
  readonly ciphers = null;

  constructor(
    private readonly settings: S3Settings,
    private readonly store: S3ContentStore,
    private readonly clientOptions: S3ClientOptions = {},
  ) {}

  get uploadsPrefix(): string {
    return `${this.settings.prefix}uploads/`;
  }

  /** The object of upload `id`'s bytes; tus names the others after it. */
  objectKeyOf(id: string): string {
    if (!isUploadId(id)) throw new Error('invalid upload id');
    return `${this.uploadsPrefix}${id}`;
  }

  createDatastore(): DataStore {
    const s3 = new S3Store({
      s3ClientConfig: { ...s3ClientConfig(this.settings, this.clientOptions), bucket: this.settings.bucket },
      partSize: 8 * MiB,
      cache: this.cache,
    });
    // tus' client is its own (declared protected): watched like the content store's.
    if (this.clientOptions.outages) watchStore((s3 as unknown as { client: S3Client }).client, this.clientOptions.outages);
    return new HashingDataStore(new KeyedDataStore(s3, (id) => this.objectKeyOf(id)), this.runningHashes);
  }

  async readableBytes(id: string): Promise<number | null> {
    return this.store.objectSize(this.objectKeyOf(id));
  }

  async open(id: string): Promise<Readable | null> {
    try {
      const answer = await this.store.client.send(new GetObjectCommand({ Bucket: this.store.bucket, Key: this.objectKeyOf(id) }));
      return (answer.Body as Readable | undefined) ?? null;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  sha256Of(id: string): Promise<{ sha256: string; size: number } | null> {
    return sha256OfUpload(this.runningHashes, id, this);
  }

  async storeInto(id: string, key: string): Promise<void> {
    const objectKey = this.objectKeyOf(id);
    const size = await this.store.objectSize(objectKey);
    if (size === null) throw new Error(`upload ${id} has no bytes to store`);
    await this.store.copyObjectInto(key, objectKey, size);
    await this.deleteObjects([objectKey]);
    this.runningHashes.forget(id);
  }

  async remove(id: string): Promise<void> {
    this.runningHashes.forget(id);
    const objectKey = this.objectKeyOf(id);
    // Found by listing rather than through `<id>.info`: a crash may have left the multipart
    // upload without its record.
    for await (const upload of this.store.listMultipartUploads(objectKey)) {
      if (upload.key === objectKey) await this.store.abortMultipart(upload.key, upload.uploadId);
    }
    await this.deleteObjects([objectKey, `${objectKey}.info`, `${objectKey}.part`]);
    await this.cache.delete(objectKey);
  }

  async idsUntouchedSince(before: Date): Promise<string[]> {
    const prefix = this.uploadsPrefix;
    const newest = new Map<string, number>();
    const saw = (name: string, at: Date) => {
      const id = name.replace(/\.(info|part)$/, '');
      if (isUploadId(id)) newest.set(id, Math.max(newest.get(id) ?? 0, at.getTime()));
    };
    for await (const object of this.store.listObjects(prefix)) saw(object.key.slice(prefix.length), object.lastModified);
    for await (const upload of this.store.listMultipartUploads(prefix)) saw(upload.key.slice(prefix.length), upload.initiated);
    return [...newest].filter(([, at]) => at < before.getTime()).map(([id]) => id);
  }

  private async deleteObjects(keys: string[]): Promise<void> {
    const answer = await this.store.client.send(
      new DeleteObjectsCommand({ Bucket: this.store.bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
    );
    const failed = (answer.Errors ?? []).filter((error) => error.Code !== 'NoSuchKey');
    if (failed.length > 0) throw new Error(`could not delete ${failed.map((error) => `${error.Key}: ${error.Code}`).join(', ')}`);
  }
}

/** @tus/s3-store under `<prefix>uploads/`; zero-length uploads are completed at creation (tus writes nothing for them). */
class KeyedDataStore extends WrappingDataStore {
  constructor(
    inner: S3Store,
    private readonly keyOf: (id: string) => string,
  ) {
    super(inner);
  }

  override async create(upload: Upload): Promise<Upload> {
    const key = this.keyOf(upload.id);
    const created = await this.inner.create(uploadWith(upload, { id: key }));
    if (created.size === 0) await this.inner.write(Readable.from([]), key, 0);
    return uploadWith(created, { id: upload.id });
  }

  override write(stream: Readable, id: string, offset: number): Promise<number> {
    return this.inner.write(stream, this.keyOf(id), offset);
  }

  override async getUpload(id: string): Promise<Upload> {
    return uploadWith(await this.inner.getUpload(this.keyOf(id)), { id });
  }

  override remove(id: string): Promise<void> {
    return this.inner.remove(this.keyOf(id));
  }

  override declareUploadLength(id: string, length: number): Promise<void> {
    return this.inner.declareUploadLength(this.keyOf(id), length);
  }
}

/** A KvStore that forgets its oldest entries beyond `limit`. */
class BoundedKvStore<T> implements KvStore<T> {
  private readonly entries: Lru<string, T>;

  constructor(limit: number) {
    this.entries = new Lru(limit);
  }

  async get(key: string): Promise<T | undefined> {
    return this.entries.get(key);
  }

  async set(key: string, value: T): Promise<void> {
    this.entries.set(key, value);
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async list(): Promise<string[]> {
    return [...this.entries.keys()];
  }
}
