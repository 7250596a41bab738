/**
 * Which content store and upload area a configuration uses (local folders, or FSS_S3_BUCKET). The S3 modules cost
 * ~30 MB and half a second of start-up, so they load only when configured, beforehand (`prepareContentStores`).
 */
import path from 'node:path';
import type { Config } from '../../config';
import { outagesOf } from '../outages';
import type { ContentStore } from './content-store';
import { LocalDiskStore } from './local-disk-store';
import { LocalUploadArea, uploadDirectory, type UploadArea } from './upload-area';

interface S3Modules {
  readonly store: typeof import('./s3-store');
  readonly area: typeof import('./s3-upload-area');
}

let s3Modules: S3Modules | undefined;

async function loadS3Modules(): Promise<S3Modules> {
  if (!s3Modules) {
    const [store, area] = await Promise.all([import('./s3-store'), import('./s3-upload-area')]);
    s3Modules = { store, area };
  }
  return s3Modules;
}

/** Loads what the stores of `config` need (the S3 modules, when it uses S3): call before the accessors. */
export async function prepareContentStores(config: Config): Promise<void> {
  if (config.s3) await loadS3Modules();
}

function s3ModulesFor(): S3Modules {
  if (!s3Modules) throw new Error('the S3 content store is not loaded: call prepareContentStores(config) first');
  return s3Modules;
}

const stores = new WeakMap<Config, ContentStore>();
const areas = new WeakMap<Config, UploadArea>();

/** The content store of `config` (one instance per configuration; stores hold no state). */
export function contentStoreFor(config: Config): ContentStore {
  let store = stores.get(config);
  if (!store) {
    if (config.s3) {
      const { createS3Client, S3ContentStore } = s3ModulesFor().store;
      store = new S3ContentStore(createS3Client(config.s3, s3ClientOptionsOf(config)), config.s3.bucket, config.s3.prefix, {
        idleTimeoutMs: config.storeTimeoutMs,
      });
    } else {
      store = new LocalDiskStore(path.join(config.dataDir, 'content'));
    }
    stores.set(config, store);
  }
  return store;
}

/** Where the unfinished uploads of `config` are staged. */
export function uploadAreaFor(config: Config): UploadArea {
  let area = areas.get(config);
  if (!area) {
    const store = contentStoreFor(config);
    if (config.s3) {
      const modules = s3ModulesFor();
      if (!(store instanceof modules.store.S3ContentStore)) throw new Error('an S3 configuration without an S3 content store');
      area = new modules.area.S3UploadArea(config.s3, store, s3ClientOptionsOf(config));
    } else {
      area = new LocalUploadArea(uploadDirectory(config), store);
    }
    areas.set(config, area);
  }
  return area;
}

function s3ClientOptionsOf(config: Config) {
  return { connectTimeoutMs: config.connectTimeoutMs, idleTimeoutMs: config.storeTimeoutMs, outages: outagesOf(config) };
}

/** The upload folder of the embedded default (tests and tools that work on its files). */
export function localUploadAreaFor(config: Config): LocalUploadArea {
  const area = uploadAreaFor(config);
  if (!(area instanceof LocalUploadArea)) throw new Error('uploads are not staged on the local disk in this configuration');
  return area;
}
