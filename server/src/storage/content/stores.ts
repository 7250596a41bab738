/**
 * Which content store and upload folder a configuration uses. The choice of engine is made here
 * and nowhere else (as database.ts does for the metadata): the embedded default keeps content in
 * `<dataDir>/content/`; an S3-compatible store plugs in here behind the same interface.
 */
import path from 'node:path';
import type { Config } from '../../config';
import type { ContentStore } from './content-store';
import { LocalDiskStore } from './local-disk-store';
import { UploadArea, uploadDirectory } from './upload-area';

const stores = new WeakMap<Config, ContentStore>();
const areas = new WeakMap<Config, UploadArea>();

/** The content store of `config` (one instance per configuration; stores hold no state). */
export function contentStoreFor(config: Config): ContentStore {
  let store = stores.get(config);
  if (!store) {
    store = new LocalDiskStore(path.join(config.dataDir, 'content'));
    stores.set(config, store);
  }
  return store;
}

/** The staging folder of unfinished uploads of `config`. */
export function uploadAreaFor(config: Config): UploadArea {
  let area = areas.get(config);
  if (!area) {
    area = new UploadArea(uploadDirectory(config));
    areas.set(config, area);
  }
  return area;
}
