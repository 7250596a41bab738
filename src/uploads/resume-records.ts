/** Resume records (docs/web-uploads.md §2): a tus URL per file fingerprint, so adding the file again sends only the rest. */
import type { Entry } from './entry';
import type { InterruptedUpload, ResumeRecord, ResumeStore, UploadSource, UploadTransport } from './types';

/** The server keeps an unfinished upload for 24 h after its creation. */
export const RESUME_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** The key of a file's resume record. */
export function fingerprint(scope: string, folderId: number, source: UploadSource): string {
  return JSON.stringify([scope, folderId, source.name, source.size, source.lastModified]);
}

export function memoryResumeStore(): ResumeStore {
  const records = new Map<string, ResumeRecord>();
  return {
    get: (key) => records.get(key),
    set: (key, record) => void records.set(key, record),
    remove: (key) => void records.delete(key),
    list: () => [...records],
  };
}

export type ResumeRecords = ReturnType<typeof createResumeRecords>;

export function createResumeRecords(options: {
  readonly store: ResumeStore;
  readonly scope: () => string;
  readonly now: () => number;
  readonly transport: UploadTransport;
}) {
  const { store: givenStore, scope, now, transport } = options;
  let stale = true;
  let interrupted: readonly InterruptedUpload[] = [];
  /** Fingerprints owned by an entry of this page. */
  const claimed = new Set<string>();
  const deleteUpload = (url: string) => void transport.deleteUpload(url).catch(() => {});
  const store: ResumeStore = {
    get: (key) => givenStore.get(key),
    list: () => givenStore.list(),
    set(key, record) {
      givenStore.set(key, record);
      stale = true;
    },
    remove(key) {
      givenStore.remove(key);
      stale = true;
    },
  };

  function release(entry: Entry) {
    if (entry.key) claimed.delete(entry.key);
    entry.key = undefined;
    stale = true;
  }

  function listInterrupted(): InterruptedUpload[] {
    const who = scope();
    const time = now();
    const result: InterruptedUpload[] = [];
    for (const [key, record] of store.list()) {
      if (record.expires <= time) {
        store.remove(key);
        continue;
      }
      if (record.scope !== who || claimed.has(key)) continue;
      result.push({ key, name: record.name, size: record.size, folderId: record.folderId });
    }
    return result;
  }

  return {
    /** Claims the entry's fingerprint in `folderId`, unless another entry of this page owns it. */
    claim(entry: Entry, folderId: number) {
      if (entry.key) return;
      const key = fingerprint(scope(), folderId, entry.source);
      if (claimed.has(key)) return;
      claimed.add(key);
      entry.key = key;
      stale = true;
    },
    /** The entry's record, unless it is about to expire (then it is forgotten). */
    usable(entry: Entry): ResumeRecord | undefined {
      const record = entry.key ? store.get(entry.key) : undefined;
      if (!record) return undefined;
      if (record.expires <= now() + 60_000) {
        store.remove(entry.key!);
        return undefined;
      }
      return record;
    },
    /** Remembers the upload just created for the entry (with its hash when known). */
    remember(entry: Entry, url: string, expires: number | undefined) {
      if (!entry.key) return;
      const { name, size } = entry.source;
      store.set(entry.key, {
        url,
        ...(entry.sha256 ? { sha256: entry.sha256 } : {}),
        name,
        size,
        folderId: entry.folderId ?? 0,
        scope: scope(),
        expires: expires ?? now() + RESUME_LIFETIME_MS,
      });
    },
    /** Adds a hash learnt after the upload was created to its record. */
    rememberHash(entry: Entry) {
      const record = entry.key ? store.get(entry.key) : undefined;
      if (entry.key && entry.sha256 && record && record.url === entry.uploadUrl && !record.sha256) store.set(entry.key, { ...record, sha256: entry.sha256 });
    },
    /** Forgets the entry's record (its upload is done with). */
    forget(entry: Entry) {
      if (entry.key) store.remove(entry.key);
    },
    /** Gives up the entry's claim (its record, if any, is then listed as interrupted). */
    release,
    /** A cancelled or given-up file: deletes its uploads on the server, forgets them and the claim. */
    discard(entry: Entry) {
      const url = entry.uploadUrl;
      if (url) deleteUpload(url);
      // Also an upload remembered from an earlier page for this file, unless another entry owns it.
      const key = entry.key ?? (entry.folderId !== null ? fingerprint(scope(), entry.folderId, entry.source) : undefined);
      const record = key && (entry.key === key || !claimed.has(key)) ? store.get(key) : undefined;
      if (key && record) {
        store.remove(key);
        if (record.url !== url) deleteUpload(record.url);
      }
      entry.uploadUrl = undefined;
      release(entry);
    },
    /** Forgets an unclaimed record and deletes its upload on the server. */
    discardInterrupted(key: string) {
      if (claimed.has(key)) return;
      const record = store.get(key);
      store.remove(key);
      if (record) deleteUpload(record.url);
    },
    /** Whether records or claims changed since interrupted() last read them. */
    stale: () => stale,
    /** This account's unclaimed records: read again only when they changed. */
    interrupted(): readonly InterruptedUpload[] {
      if (stale) {
        stale = false;
        interrupted = listInterrupted();
      }
      return interrupted;
    },
    /** Drops every claim (the queue was emptied). */
    reset() {
      claimed.clear();
      stale = true;
    },
  };
}
