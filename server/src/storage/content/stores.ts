/**
 * Which content store and upload area a configuration uses. The choice of engine is made here
 * and nowhere else (as database.ts does for the metadata): the embedded default keeps content in
 * `<dataDir>/content/` and unfinished uploads in `<dataDir>/uploads/`; with FSS_S3_BUCKET set,
 * both live in that bucket (s3-store.ts, s3-upload-area.ts), behind the same interfaces.
 */
import path from 'node:path';
import type { Config } from '../../config';
import type { ContentStore } from './content-store';
import { LocalDiskStore } from './local-disk-store';
import { createS3Client, S3ContentStore } from './s3-store';
import { S3UploadArea } from './s3-upload-area';
import { LocalUploadArea, uploadDirectory, type UploadArea } from './upload-area';

const stores = new WeakMap<Config, ContentStore>();
const areas = new WeakMap<Config, UploadArea>();

/** The content store of `config` (one instance per configuration; stores hold no state). */
export function contentStoreFor(config: Config): ContentStore {
  let store = stores.get(config);
  if (!store) {
    store = config.s3
      ? new S3ContentStore(createS3Client(config.s3), config.s3.bucket, config.s3.prefix)
      : new LocalDiskStore(path.join(config.dataDir, 'content'));
    stores.set(config, store);
  }
  return store;
}

/** Where the unfinished uploads of `config` are staged. */
export function uploadAreaFor(config: Config): UploadArea {
  let area = areas.get(config);
  if (!area) {
    const store = contentStoreFor(config);
    area = config.s3 && store instanceof S3ContentStore ? new S3UploadArea(config.s3, store) : new LocalUploadArea(uploadDirectory(config), store);
    areas.set(config, area);
  }
  return area;
}

/** The upload folder of the embedded default (tests and tools that work on its files). */
export function localUploadAreaFor(config: Config): LocalUploadArea {
  const area = uploadAreaFor(config);
  if (!(area instanceof LocalUploadArea)) throw new Error('uploads are not staged on the local disk in this configuration');
  return area;
}
