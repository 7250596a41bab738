/** A tus datastore handing everything to another: the base of the hashing and encrypting datastores, which override what they change. */
import type { Readable } from 'node:stream';
import { DataStore, Upload } from '@tus/server';

/** `upload` with another id or offset (tus' Upload is a class: copied field by field, not spread). */
export function uploadWith(upload: Upload, change: { readonly id?: string; readonly offset?: number }): Upload {
  const { id, size, offset, metadata, storage, creation_date } = upload;
  return new Upload({ id, size, offset, metadata, storage, creation_date, ...change });
}

export class WrappingDataStore extends DataStore {
  constructor(protected readonly inner: DataStore) {
    super();
    this.extensions = [...inner.extensions];
  }

  override create(upload: Upload): Promise<Upload> {
    return this.inner.create(upload);
  }

  override write(stream: Readable, id: string, offset: number): Promise<number> {
    return this.inner.write(stream, id, offset);
  }

  override getUpload(id: string): Promise<Upload> {
    return this.inner.getUpload(id);
  }

  override remove(id: string): Promise<void> {
    return this.inner.remove(id);
  }

  override declareUploadLength(id: string, length: number): Promise<void> {
    return this.inner.declareUploadLength(id, length);
  }

  override deleteExpired(): Promise<number> {
    return this.inner.deleteExpired();
  }

  override getExpiration(): number {
    return this.inner.getExpiration();
  }
}
