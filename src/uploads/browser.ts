/** The engine's browser parts: the transport, a Web Worker hasher, and resume records in localStorage. */
import type { Api } from '../api/client';
import type { TusClient } from '../api/tus';
import { hashBlob } from './hash';
import type { HashWorkerMessage, HashWorkerRequest } from './hash-worker';
import type { Hasher, ResumeRecord, ResumeStore, UploadTransport } from './types';

export function createUploadTransport(api: Api, tus: TusClient): UploadTransport {
  return {
    ...tus,
    fileAdd: (params) => api.fileAdd(params),
    folderAdd: (params) => api.folderAdd(params),
    listFolder: (folderId) => api.getFiles({ dir: String(folderId), order: 'name', desc: '0' }),
  };
}

/** SHA-256 in a Web Worker (one per file, ended when done or aborted); on the main thread if no worker can start. */
export function createWorkerHasher(): Hasher {
  return {
    hash(source, { signal, onProgress }) {
      let worker: Worker;
      try {
        worker = new Worker(new URL('./hash-worker.ts', import.meta.url), { type: 'module', name: 'fss-hash' });
      } catch {
        return hashBlob(source, { signal, onProgress });
      }
      return new Promise<string>((resolve, reject) => {
        const end = () => {
          worker.terminate();
          signal.removeEventListener('abort', onAbort);
        };
        const onAbort = () => {
          end();
          reject(signal.reason);
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        worker.onmessage = (event: MessageEvent<HashWorkerMessage>) => {
          const message = event.data;
          if (message.type === 'progress') onProgress?.(message.bytes);
          else if (message.type === 'done') {
            end();
            resolve(message.hash);
          } else {
            end();
            reject(new Error(`The file could not be read: ${message.message}`));
          }
        };
        worker.onerror = (event) => {
          // The worker script failed to load or run: hash here instead.
          event.preventDefault();
          end();
          hashBlob(source, { signal, onProgress }).then(resolve, reject);
        };
        worker.postMessage({ file: source } satisfies HashWorkerRequest);
      });
    },
  };
}

const PREFIX = 'fss.upload:';

function isRecord(value: unknown): value is ResumeRecord {
  const record = value as Partial<ResumeRecord> | null;
  return (
    typeof record === 'object' &&
    record !== null &&
    typeof record.url === 'string' &&
    (record.sha256 === undefined || typeof record.sha256 === 'string') &&
    typeof record.name === 'string' &&
    typeof record.size === 'number' &&
    typeof record.folderId === 'number' &&
    typeof record.scope === 'string' &&
    typeof record.expires === 'number'
  );
}

/** One localStorage entry per unfinished upload (`fss.upload:<fingerprint>`), shared by the tabs. */
export function localStorageResumeStore(storage: Storage | undefined = safeLocalStorage()): ResumeStore {
  const read = (key: string): ResumeRecord | undefined => {
    try {
      const value: unknown = JSON.parse(storage?.getItem(PREFIX + key) ?? 'null');
      return isRecord(value) ? value : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    get: read,
    set(key, record) {
      try {
        storage?.setItem(PREFIX + key, JSON.stringify(record));
      } catch {
        // full or disabled: this upload just cannot be resumed after a reload
      }
    },
    remove(key) {
      try {
        storage?.removeItem(PREFIX + key);
      } catch {
        // disabled: nothing stored
      }
    },
    list() {
      const result: Array<readonly [string, ResumeRecord]> = [];
      if (!storage) return result;
      try {
        for (let i = 0; i < storage.length; i++) {
          const name = storage.key(i);
          if (!name?.startsWith(PREFIX)) continue;
          const key = name.slice(PREFIX.length);
          const record = read(key);
          if (record) result.push([key, record]);
        }
      } catch {
        // disabled
      }
      return result;
    },
  };
}

function safeLocalStorage(): Storage | undefined {
  try {
    return globalThis.localStorage ?? undefined;
  } catch {
    return undefined;
  }
}
