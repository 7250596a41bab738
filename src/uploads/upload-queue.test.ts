import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors';
import type { FileAddParams, FolderAddParams } from '../api/generated/operations';
import type { FileItem, FolderItem, Listing } from '../api/results';
import { hashBlob } from './hash';
import { extensionOf, HASH_GRACE_MS } from './instant-upload';
import { memoryResumeStore } from './resume-records';
import { createUploadQueue, type UploadQueue, type UploadQueueOptions } from './upload-queue';
import type { Hasher, PatchOptions, ResumeStore, UploadSnapshot, UploadState, UploadTransport } from './types';

// ---- A fake service: tus in memory, FileAdd and FolderAdd with the service's rules ---------------

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface FakeUpload {
  readonly length: number;
  bytes: Uint8Array;
  offset: number;
  sha256?: string;
  claimed: boolean;
}

/** A PATCH the test holds until it lets it go. */
interface HeldPatch {
  readonly url: string;
  readonly offset: number;
  release(): void;
}

class FakeService implements UploadTransport {
  readonly uploads = new Map<string, FakeUpload>();
  readonly files: FileItem[] = [];
  readonly folders: FolderItem[] = [];
  /** Content the account owns (instant upload). */
  readonly owned = new Set<string>();
  readonly calls: string[] = [];
  readonly patchOffsets: number[] = [];
  /** The next PATCHes to break: each stores this fraction of its chunk, then the connection drops. */
  readonly breakPatches: number[] = [];
  /** When set, PATCHes wait for the test to release them. */
  holdPatches = false;
  /** When set, the PATCH at this offset waits for the test. */
  holdAtOffset?: number;
  /** When set, the PATCH at this offset stores its bytes, then waits for the test before it answers. */
  holdAnswerAtOffset?: number;
  readonly held: HeldPatch[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** Overrides the hash the server computes (a file that changed under the upload). */
  corruptHash = false;
  /** Each call takes this long (so that each state lasts long enough to be seen). */
  latencyMs = 0;
  private nextId = 1;

  private async wait() {
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
  }

  async createUpload(length: number): Promise<{ url: string; offset: number; sha256?: string }> {
    this.calls.push(`POST ${length}`);
    await this.wait();
    const url = `https://files.test/upload/${this.nextId++}`;
    const upload: FakeUpload = { length, bytes: new Uint8Array(length), offset: 0, claimed: false };
    this.uploads.set(url, upload);
    if (length === 0) upload.sha256 = sha256(new Uint8Array());
    return { url, offset: 0, sha256: upload.sha256 };
  }

  async headUpload(url: string) {
    this.calls.push(`HEAD ${url}`);
    const upload = this.uploads.get(url);
    if (!upload) throw new ApiError('NotFound', 'Upload not found.', {}, 404);
    return { offset: upload.offset, length: upload.length, sha256: upload.sha256 };
  }

  async patchUpload(url: string, offset: number, chunk: Blob, { signal, onProgress }: PatchOptions) {
    this.calls.push(`PATCH ${offset}`);
    await this.wait();
    this.patchOffsets.push(offset);
    const upload = this.uploads.get(url);
    if (!upload) throw new ApiError('NotFound', 'Upload not found.', {}, 404);
    if (upload.offset !== offset) throw new ApiError('Conflict', 'Wrong offset.', {}, 409);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.holdPatches || this.holdAtOffset === offset) {
        await new Promise<void>((resolve, reject) => {
          this.held.push({ url, offset, release: resolve });
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      }
      signal.throwIfAborted();
      // A browser that cannot read the body (the file changed since it was picked) fails the request.
      const body = await chunk.arrayBuffer().catch(() => {
        throw new ApiError('Network', 'Failed to send.');
      });
      const bytes = new Uint8Array(body);
      const broken = this.breakPatches.shift();
      const keep = broken === undefined ? bytes.length : Math.floor(bytes.length * broken);
      upload.bytes.set(bytes.subarray(0, keep), offset);
      upload.offset += keep;
      onProgress?.(keep);
      if (broken !== undefined) throw new ApiError('Network', 'Connection reset.');
      if (upload.offset === upload.length) upload.sha256 = this.corruptHash ? '0'.repeat(64) : sha256(upload.bytes);
      if (this.holdAnswerAtOffset === offset) {
        await new Promise<void>((resolve, reject) => {
          this.held.push({ url, offset, release: resolve });
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      }
      return { offset: upload.offset, sha256: upload.sha256 };
    } finally {
      this.inFlight--;
    }
  }

  async deleteUpload(url: string) {
    this.calls.push(`DELETE ${url}`);
    // One that FileAdd took is the file's content now: the service no longer knows it as an upload.
    if (!this.uploads.get(url) || this.uploads.get(url)?.claimed) throw new ApiError('NotFound', 'Upload not found.', {}, 404);
    this.uploads.delete(url);
  }

  async fileAdd(params: FileAddParams): Promise<FileItem> {
    this.calls.push(`FileAdd ${params.name}`);
    await this.wait();
    const upload = [...this.uploads.values()].find((u) => u.sha256 === params.hash && u.length === params.size && !u.claimed);
    if (upload) upload.claimed = true;
    else if (!this.owned.has(params.hash)) throw new ApiError('NotFound', 'no completed upload or owned content with that hash and size', {}, 404);
    this.owned.add(params.hash);
    const file: FileItem = {
      type: 'file',
      id: this.files.length + 1,
      dir: params.dirid,
      name: params.name,
      ext: params.ext,
      hash: params.hash,
      size: params.size,
      time: '2026-01-01T00:00:00Z',
      shared: false,
      linked: false,
      encrypted: false,
    };
    this.files.push(file);
    return file;
  }

  async folderAdd({ dirid, name }: FolderAddParams): Promise<FolderItem> {
    this.calls.push(`FolderAdd ${dirid}/${name}`);
    const taken = [...this.folders, ...this.files].some((item) => item.dir === dirid && item.name.toLowerCase() === name.toLowerCase());
    if (taken) throw new ApiError('Conflict', `"${name}" already exists in this folder`, {}, 409);
    const folder: FolderItem = { type: 'folder', id: 100 + this.folders.length, dir: dirid, name, size: 0, time: '', shared: false, linked: false, encrypted: false };
    this.folders.push(folder);
    return folder;
  }

  async listFolder(folderId: number): Promise<Listing> {
    this.calls.push(`GetFiles ${folderId}`);
    return {
      count: 0,
      folders: this.folders.filter((folder) => folder.dir === folderId),
      files: this.files.filter((file) => file.dir === folderId),
      truncated: false,
    };
  }

  /** Lets every held PATCH go, and the ones that come later too. */
  releaseAll() {
    this.holdPatches = false;
    this.holdAtOffset = undefined;
    this.holdAnswerAtOffset = undefined;
    for (const patch of this.held.splice(0)) patch.release();
  }

  contentOf(file: FileItem): Uint8Array | undefined {
    return [...this.uploads.values()].find((upload) => upload.sha256 === file.hash)?.bytes;
  }
}

/** A hasher that starts reading only when the test says (release), and reports whether it was stopped. */
class HeldHasher implements Hasher {
  calls = 0;
  readonly signals: AbortSignal[] = [];
  private readonly waiting: Array<() => void> = [];
  hash(source: Blob, options: { signal: AbortSignal; onProgress?: (bytes: number) => void }) {
    this.calls++;
    this.signals.push(options.signal);
    return new Promise<string>((resolve, reject) => {
      options.signal.addEventListener('abort', () => reject(options.signal.reason), { once: true });
      this.waiting.push(() => void hashBlob(source, { ...options, sliceBytes: 16 }).then(resolve, reject));
    });
  }
  release() {
    for (const start of this.waiting.splice(0)) start();
  }
}

/** A hasher whose progress the test reports, and which never ends unless stopped. */
class DrivenHasher implements Hasher {
  options?: { signal: AbortSignal; onProgress?: (bytes: number) => void };
  hash(_source: Blob, options: { signal: AbortSignal; onProgress?: (bytes: number) => void }) {
    this.options = options;
    return new Promise<string>((_resolve, reject) => options.signal.addEventListener('abort', () => reject(options.signal.reason), { once: true }));
  }
  progress(bytes: number) {
    this.options?.onProgress?.(bytes);
  }
  get stopped() {
    return this.options?.signal.aborted ?? false;
  }
}

class CountingHasher implements Hasher {
  calls = 0;
  hash(source: Blob, options: { signal: AbortSignal; onProgress?: (bytes: number) => void }) {
    this.calls++;
    return hashBlob(source, { ...options, sliceBytes: 16 });
  }
}

function fileOf(name: string, size: number, seed = 1): File {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return new File([bytes], name, { lastModified: 1_700_000_000_000 + seed });
}

async function bytesOf(file: File) {
  return new Uint8Array(await file.arrayBuffer());
}

function setup(options: Partial<UploadQueueOptions> = {}) {
  const service = (options.transport as FakeService | undefined) ?? new FakeService();
  const hasher = new CountingHasher();
  const store = options.store ?? memoryResumeStore();
  const queue = createUploadQueue({
    transport: service,
    hasher,
    store,
    scope: () => '1001',
    chunkBytes: 100,
    progressIntervalMs: 20,
    retryDelaysMs: [5, 5, 5],
    ...options,
  });
  return { service, hasher, store, queue };
}

/** Resolves with the first snapshot that satisfies `test`. */
function until(queue: UploadQueue, test: (snapshot: UploadSnapshot) => boolean, timeoutMs = 5_000): Promise<UploadSnapshot> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const snapshot = queue.getSnapshot();
      if (!test(snapshot)) return false;
      clearTimeout(timer);
      unsubscribe();
      resolve(snapshot);
      return true;
    };
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`timed out; states: ${queue.getSnapshot().items.map((item) => `${item.name}=${item.state}`).join(', ')}`));
    }, timeoutMs);
    const unsubscribe = queue.subscribe(() => void check());
    queueMicrotask(check);
  });
}

const stateOf = (queue: UploadQueue, id: string): UploadState | undefined => queue.getSnapshot().items.find((item) => item.id === id)?.state;
const allIn = (...states: UploadState[]) => (snapshot: UploadSnapshot) => snapshot.items.length > 0 && snapshot.items.every((item) => states.includes(item.state));
const until2 = (condition: () => boolean, timeoutMs = 5_000) =>
  new Promise<void>((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      if (condition()) resolve();
      else if (Date.now() - started > timeoutMs) reject(new Error('timed out'));
      else setTimeout(poll, 2);
    };
    poll();
  });

// ---- The specification ---------------------------------------------------------------------------

describe('the upload queue', () => {
  it('hashes a file of one chunk or less first, finds it is not owned, sends it with tus, and adds it with the hash the upload answered', async () => {
    // Every step takes a few ms, so that each state is announced on its own.
    const slowHasher: Hasher = {
      hash: async (source, options) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return hashBlob(source, options);
      },
    };
    const { service, queue, store } = setup({ progressIntervalMs: 0, hasher: slowHasher });
    service.latencyMs = 5;
    const file = fileOf('report.PDF', 100);
    const states: UploadState[] = [];
    queue.subscribe(() => {
      const state = queue.getSnapshot().items[0]?.state;
      if (state && states[states.length - 1] !== state) states.push(state);
    });

    queue.add([{ source: file, folder: 7 }]);
    const done = await until(queue, allIn('done', 'error'));

    const item = done.items[0];
    expect(item.state).toBe('done');
    expect(item.instant).toBe(false);
    expect(item.uploaded).toBe(100);
    expect(states).toEqual(['hashing', 'checking', 'uploading', 'adding', 'done']); // a free slot starts it at once
    expect(service.calls).toEqual(['FileAdd report.PDF', 'POST 100', 'PATCH 0', 'FileAdd report.PDF']); // the probe, then the record
    const hash = sha256(await bytesOf(file));
    expect(item.file).toMatchObject({ name: 'report.PDF', ext: 'pdf', size: 100, dir: 7, hash });
    expect(store.list()).toEqual([]); // nothing left to resume
    expect(done.totals).toMatchObject({ files: 1, done: 1, bytes: 100, uploaded: 100, active: 0 });
  });

  it('sends a bigger file at once, hashes it alongside, asks FileAdd with the hash mid-transfer (404), and adds it with the hash the upload answered', async () => {
    const hasher = new HeldHasher();
    const { service, queue, store } = setup({ hasher, progressIntervalMs: 0 });
    service.latencyMs = 5;
    const file = fileOf('report.PDF', 350);
    const hash = sha256(await bytesOf(file));
    const states: UploadState[] = [];
    queue.subscribe(() => {
      const state = queue.getSnapshot().items[0]?.state;
      if (state && states[states.length - 1] !== state) states.push(state);
    });
    service.holdAtOffset = 200;

    queue.add([{ source: file, folder: 7 }]);
    // Bytes flow before the hash is known: the upload is remembered without it.
    await until2(() => service.held.length === 1);
    expect(service.calls).toEqual(['POST 350', 'PATCH 0', 'PATCH 100', 'PATCH 200']);
    expect(store.list()[0][1].sha256).toBeUndefined();

    hasher.release();
    await until2(() => service.calls.includes('FileAdd report.PDF'));
    await until2(() => store.list()[0]?.[1].sha256 === hash); // now a reload can check it before resuming
    service.releaseAll();
    const done = await until(queue, allIn('done', 'error'));

    expect(done.items[0]).toMatchObject({ state: 'done', instant: false, uploaded: 350 });
    expect(states).toEqual(['uploading', 'adding', 'done']);
    expect(service.calls).toEqual(['POST 350', 'PATCH 0', 'PATCH 100', 'PATCH 200', 'FileAdd report.PDF', 'PATCH 300', 'FileAdd report.PDF']);
    expect(done.items[0].file).toMatchObject({ name: 'report.PDF', size: 350, dir: 7, hash });
    expect(store.list()).toEqual([]);
  });

  it("tells a request's onAdded the file FileAdd added, by transfer and by instant upload alike (a replace renames it then)", async () => {
    const { service, queue } = setup();
    const sent = fileOf('sent.bin', 100);
    const owned = fileOf('owned.bin', 50);
    service.owned.add(sha256(await bytesOf(owned)));
    const added: string[] = [];
    queue.add([sent, owned].map((source) => ({ source, folder: 0, onAdded: (file: FileItem) => added.push(`${source.name}: ${file.id}`) })));
    await until(queue, allIn('done', 'error'));
    expect(added.sort()).toEqual(service.files.map((file) => `${file.name}: ${file.id}`).sort());
    expect(added).toHaveLength(2);
  });

  it('adds a small file whose content the account already owns without any transfer (instant upload)', async () => {
    const { service, queue } = setup();
    const file = fileOf('copy.bin', 100);
    service.owned.add(sha256(await bytesOf(file)));

    queue.add([{ source: file, folder: 0 }]);
    const done = await until(queue, allIn('done', 'error'));

    expect(done.items[0]).toMatchObject({ state: 'done', instant: true, uploaded: 100 });
    expect(service.calls).toEqual(['FileAdd copy.bin']);
  });

  it('stops the transfer of a big file once its hash shows the account owns the content, deletes the upload, and adds the file (instant upload)', async () => {
    const hasher = new HeldHasher();
    const { service, queue, store } = setup({ hasher });
    const file = fileOf('copy.iso', 1000);
    service.owned.add(sha256(await bytesOf(file)));
    service.holdAtOffset = 200;

    queue.add([{ source: file, folder: 0 }]);
    await until2(() => service.held.length === 1);
    hasher.release();
    const done = await until(queue, allIn('done', 'error'));

    expect(done.items[0]).toMatchObject({ state: 'done', instant: true, uploaded: 1000 });
    await until2(() => service.calls.some((call) => call.startsWith('DELETE')));
    // The held third chunk was abandoned: nothing after it was sent.
    expect(service.calls).toEqual(['POST 1000', 'PATCH 0', 'PATCH 100', 'PATCH 200', 'FileAdd copy.iso', 'DELETE https://files.test/upload/1']);
    expect(service.uploads.size).toBe(0);
    expect(service.files.map((f) => f.name)).toEqual(['copy.iso']);
    expect(store.list()).toEqual([]);
  });

  it('adds the file once, as uploaded (not instant), when the FileAdd by hash comes after the last byte arrived and takes this very upload', async () => {
    const hasher = new HeldHasher();
    const { service, queue } = setup({ hasher });
    const file = fileOf('photos.zip', 200);
    service.holdAnswerAtOffset = 100; // the upload is complete; its answer has not come back yet

    queue.add([{ source: file, folder: 0 }]);
    await until2(() => service.held.length === 1);
    hasher.release();
    const done = await until(queue, allIn('done', 'error'));

    expect(done.items[0]).toMatchObject({ state: 'done', instant: false });
    expect(service.calls.filter((call) => call.startsWith('FileAdd'))).toHaveLength(1);
    expect(service.files).toHaveLength(1);
    expect(service.contentOf(done.items[0].file!)).toEqual(await bytesOf(file));
  });

  it('keeps hashing alongside while it can end well before the transfer, and stops it once it cannot', async () => {
    /** Half the file is sent at 1,000 bytes a second; answers whether hashing `hashed` bytes by t = 1.5 s stopped it. */
    async function stoppedWhenHashed(hashed: number) {
      let time = 0;
      const hasher = new DrivenHasher();
      const { service, queue } = setup({ hasher, now: () => time });
      const patch = service.patchUpload.bind(service);
      service.patchUpload = (url, offset, chunk, options) => {
        time += 100;
        return patch(url, offset, chunk, options);
      };
      service.holdAtOffset = 500;
      queue.add([{ source: fileOf('measured.bin', 1000), folder: 0 }]);
      await until2(() => service.held.length === 1);

      time = HASH_GRACE_MS - 100;
      hasher.progress(10); // within the grace period: however slow, it goes on
      expect(hasher.stopped).toBe(false);
      time = HASH_GRACE_MS + 500;
      hasher.progress(hashed);
      const stopped = hasher.stopped;
      service.releaseAll();
      await until(queue, allIn('done', 'error'));
      return stopped;
    }
    // 950 bytes in 1.5 s: the rest in 80 ms, the transfer's rest in about 1.8 s.
    expect(await stoppedWhenHashed(950)).toBe(false);
    // 100 bytes in 1.5 s: the rest in 13.5 s, long after the transfer.
    expect(await stoppedWhenHashed(100)).toBe(true);
  });

  it('stops hashing when the last byte arrives first, and adds the file with the hash the upload answered', async () => {
    const hasher = new HeldHasher(); // never released: the hash never comes
    const { service, queue } = setup({ hasher });
    const file = fileOf('fast-line.bin', 350);

    queue.add([{ source: file, folder: 0 }]);
    const done = await until(queue, allIn('done', 'error'));

    expect(done.items[0]).toMatchObject({ state: 'done', instant: false });
    expect(done.items[0].file?.hash).toBe(sha256(await bytesOf(file)));
    expect(hasher.signals[0].aborted).toBe(true);
    expect(service.calls.filter((call) => call.startsWith('FileAdd'))).toHaveLength(1);
  });

  it('refuses a file whose name the service would refuse before hashing or sending anything, with the service\'s reason', async () => {
    const { service, hasher, queue } = setup();
    const [id] = queue.add([{ source: fileOf('\u202egnp.exe', 50), folder: 0 }]);
    await until(queue, allIn('error'));
    expect(queue.getSnapshot().items.find((item) => item.id === id)?.error).toMatchObject({
      code: 'InvalidArgument',
      message: 'name may not contain U+202E (a bidirectional text control)',
      // The panel tells the problem in the user's language (components/uploads/upload-error-text.ts).
      cause: { problem: { kind: 'deceptive-character', what: 'bidi-control' } },
    });
    expect(service.calls).toEqual([]);
    expect(hasher.calls).toBe(0);
  });

  it('runs at most `concurrency` files at once and starts the next as one finishes', async () => {
    const { service, queue } = setup({ concurrency: 3 });
    service.holdPatches = true;
    const ids = queue.add([1, 2, 3, 4, 5].map((n) => ({ source: fileOf(`f${n}.txt`, 50, n), folder: 0 })));

    await until2(() => service.held.length === 3);
    const states = ids.map((id) => stateOf(queue, id));
    expect(states.slice(0, 3)).toEqual(['uploading', 'uploading', 'uploading']);
    expect(states.slice(3)).toEqual(['queued', 'queued']);

    service.releaseAll();
    await until(queue, allIn('done'));
    expect(service.maxInFlight).toBe(3);
    expect(service.files.map((file) => file.name).sort()).toEqual(['f1.txt', 'f2.txt', 'f3.txt', 'f4.txt', 'f5.txt']);
  });

  it('pauses a transfer (the request is aborted, the slot freed) and resumes it from the offset HEAD reports', async () => {
    const { service, queue } = setup({ concurrency: 1 });
    const file = fileOf('big.iso', 450);
    const [id, other] = queue.add([
      { source: file, folder: 0 },
      { source: fileOf('next.txt', 10, 2), folder: 0 },
    ]);
    // Two chunks go through; the third is held.
    service.holdAtOffset = 200;
    await until2(() => service.held.length === 1);
    const heldAt = 200;

    queue.pause(id);
    await until(queue, (snapshot) => snapshot.items[0].state === 'paused');
    service.holdAtOffset = undefined;
    // The slot goes to the next file.
    await until(queue, (snapshot) => snapshot.items[1].state === 'done');
    expect(stateOf(queue, other)).toBe('done');
    expect(stateOf(queue, id)).toBe('paused');

    const patchesBefore = service.patchOffsets.length;
    queue.resume(id);
    const done = await until(queue, (snapshot) => snapshot.items[0].state === 'done');
    expect(service.calls).toContain(`HEAD https://files.test/upload/1`);
    expect(service.patchOffsets.slice(patchesBefore)[0]).toBe(heldAt);
    expect(done.items[0].resumedFrom).toBe(heldAt);
    expect(service.contentOf(done.items[0].file!)).toEqual(await bytesOf(file));
  });

  it('retries a PATCH whose connection dropped, with a delay, from the offset HEAD reports', async () => {
    const { service, queue } = setup();
    const file = fileOf('flaky.dat', 300);
    // The second PATCH loses its connection after half of its chunk arrived.
    let patches = 0;
    const original = service.patchUpload.bind(service);
    service.patchUpload = (url, offset, chunk, options) => {
      if (++patches === 2) service.breakPatches.push(0.5);
      return original(url, offset, chunk, options);
    };
    const retries: number[] = [];
    queue.subscribe(() => {
      const retryAt = queue.getSnapshot().items[0]?.retryAt;
      if (retryAt !== undefined && !retries.includes(retryAt)) retries.push(retryAt);
    });

    queue.add([{ source: file, folder: 0 }]);
    const done = await until(queue, allIn('done', 'error'));

    expect(done.items[0].state).toBe('done');
    expect(retries).toHaveLength(1); // the panel could show "trying again in …"
    expect(service.patchOffsets).toEqual([0, 100, 150, 250]);
    expect(service.calls.filter((call) => call.startsWith('HEAD'))).toHaveLength(1);
    expect(service.contentOf(done.items[0].file!)).toEqual(await bytesOf(file));
  });

  it('goes on at once when told the connection is back (retryNow), without waiting out the delay', async () => {
    const { service, queue } = setup({ retryDelaysMs: [60_000] });
    service.breakPatches.push(0.5);
    queue.add([{ source: fileOf('back-online.bin', 150), folder: 0 }]);
    await until(queue, (snapshot) => snapshot.items[0]?.retryAt !== undefined);

    queue.retryNow();
    const done = await until(queue, allIn('done', 'error'), 2_000);
    expect(done.items[0].state).toBe('done');
    expect(service.patchOffsets).toEqual([0, 50]); // the broken first chunk kept half; HEAD said 50
  });

  it('gives up after the retry delays run out, and Retry continues from the server offset', async () => {
    const { service, queue } = setup({ retryDelaysMs: [1, 1] });
    const file = fileOf('offline.dat', 250);
    service.breakPatches.push(0.2, 0, 0); // three broken attempts: one more than the delays allow

    const [id] = queue.add([{ source: file, folder: 0 }]);
    const failed = await until(queue, allIn('error', 'done'));
    expect(failed.items[0]).toMatchObject({ state: 'error', error: { code: 'Network' } });

    queue.resume(id);
    const done = await until(queue, allIn('done'));
    expect(service.patchOffsets[service.patchOffsets.length - 3]).toBe(20);
    expect(service.contentOf(done.items[0].file!)).toEqual(await bytesOf(file));
  });

  it('resumes after a page reload: the same file, added again, skips hashing and continues from the HEAD offset', async () => {
    const service = new FakeService();
    const store: ResumeStore = memoryResumeStore();
    const file = fileOf('movie.mkv', 420);

    // The first page: two chunks arrive, then the page goes away mid-PATCH.
    const first = setup({ transport: service, store });
    service.holdAtOffset = 200;
    first.queue.add([{ source: file, folder: 5 }]);
    await until2(() => service.held.length === 1);
    first.queue.reset();
    service.holdAtOffset = undefined;
    expect(store.list()).toHaveLength(1);

    // The next page lists it as interrupted until the file is added again.
    const second = setup({ transport: service, store });
    const listed = await until(second.queue, (snapshot) => snapshot.interrupted.length === 1);
    expect(listed.interrupted[0]).toMatchObject({ name: 'movie.mkv', size: 420, folderId: 5 });

    const patchesBefore = service.patchOffsets.length;
    second.queue.add([{ source: new File([file], file.name, { lastModified: file.lastModified }), folder: 5 }]);
    const done = await until(second.queue, allIn('done', 'error'));

    expect(done.items[0]).toMatchObject({ state: 'done', resumedFrom: 200, instant: false });
    expect(done.interrupted).toEqual([]);
    expect(second.hasher.calls).toBe(0); // the hash was remembered with the upload
    expect(service.patchOffsets.slice(patchesBefore)).toEqual([200, 300, 400]);
    expect(service.calls.filter((call) => call.startsWith('POST'))).toHaveLength(1);
    expect(service.contentOf(done.items[0].file!)).toEqual(await bytesOf(file));
    expect(store.list()).toEqual([]);
  });

  it('resumes after a reload an upload remembered before its hash was known: HEAD at once, hashing alongside', async () => {
    const service = new FakeService();
    const store = memoryResumeStore();
    const file = fileOf('raw.mov', 420);

    // The first page goes away after two chunks, before its hash was known.
    const first = setup({ transport: service, store, hasher: new HeldHasher() });
    service.holdAtOffset = 200;
    first.queue.add([{ source: file, folder: 5 }]);
    await until2(() => service.held.length === 1);
    first.queue.reset();
    service.holdAtOffset = undefined;
    expect(store.list()[0][1]).toMatchObject({ url: 'https://files.test/upload/1', name: 'raw.mov' });
    expect(store.list()[0][1].sha256).toBeUndefined();

    const second = setup({ transport: service, store });
    const callsBefore = service.calls.length;
    second.queue.add([{ source: new File([file], file.name, { lastModified: file.lastModified }), folder: 5 }]);
    const done = await until(second.queue, allIn('done', 'error'));

    expect(done.items[0]).toMatchObject({ state: 'done', resumedFrom: 200, instant: false });
    const calls = service.calls.slice(callsBefore);
    expect(calls[0]).toBe('HEAD https://files.test/upload/1');
    expect(calls.filter((call) => call.startsWith('PATCH'))).toEqual(['PATCH 200', 'PATCH 300', 'PATCH 400']);
    expect(calls.filter((call) => call.startsWith('POST'))).toEqual([]);
    expect(second.hasher.calls).toBe(1);
    expect(service.contentOf(done.items[0].file!)).toEqual(await bytesOf(file));
    expect(store.list()).toEqual([]);
  });

  it('does not resume an upload remembered for another account or another folder', async () => {
    const service = new FakeService();
    const store = memoryResumeStore();
    const file = fileOf('shared.txt', 300);
    const first = setup({ transport: service, store });
    service.holdAtOffset = 100;
    first.queue.add([{ source: file, folder: 5 }]);
    await until2(() => service.held.length === 1);
    first.queue.reset();
    service.holdAtOffset = undefined;

    const other = setup({ transport: service, store, scope: () => '2002' });
    expect((await until(other.queue, () => true)).interrupted).toEqual([]);
    other.queue.add([{ source: file, folder: 5 }]);
    await until(other.queue, allIn('done'));
    expect(other.hasher.calls).toBe(1);
    expect(service.calls.filter((call) => call.startsWith('POST'))).toHaveLength(2);
  });

  it('starts a new upload when the remembered one has expired on the server (HEAD 404)', async () => {
    const service = new FakeService();
    const store = memoryResumeStore();
    const file = fileOf('old.txt', 150);
    store.set(JSON.stringify(['1001', 0, file.name, file.size, file.lastModified]), {
      url: 'https://files.test/upload/gone',
      sha256: sha256(await bytesOf(file)),
      name: file.name,
      size: file.size,
      folderId: 0,
      scope: '1001',
      expires: Date.now() + 3_600_000,
    });
    const { queue } = setup({ transport: service, store });
    queue.add([{ source: file, folder: 0 }]);
    const done = await until(queue, allIn('done', 'error'));
    expect(done.items[0].state).toBe('done');
    expect(service.calls).toEqual(['FileAdd old.txt', 'HEAD https://files.test/upload/gone', 'POST 150', 'PATCH 0', 'PATCH 100', 'FileAdd old.txt']);
  });

  it('learns the right offset from HEAD when a PATCH answers 409', async () => {
    const { service, queue } = setup();
    const file = fileOf('conflict.bin', 200);
    const original = service.patchUpload.bind(service);
    let first = true;
    service.patchUpload = async (url, offset, chunk, options) => {
      if (first && offset === 100) {
        first = false;
        // Another tab sent this chunk meanwhile.
        const upload = service.uploads.get(url)!;
        upload.bytes.set(new Uint8Array(await chunk.arrayBuffer()).subarray(0, 40), 100);
        upload.offset = 140;
      }
      return original(url, offset, chunk, options);
    };
    queue.add([{ source: file, folder: 0 }]);
    const done = await until(queue, allIn('done', 'error'));
    expect(done.items[0].state).toBe('done');
    expect(service.patchOffsets).toEqual([0, 100, 140]);
  });

  it('cancels: aborts the transfer, deletes the upload on the server and forgets it', async () => {
    const { service, queue, store } = setup();
    service.holdPatches = true;
    const [id] = queue.add([{ source: fileOf('unwanted.zip', 300), folder: 0 }]);
    await until2(() => service.held.length === 1);
    expect(store.list()).toHaveLength(1);

    queue.cancel(id);
    await until(queue, (snapshot) => snapshot.items[0].state === 'cancelled');
    await until2(() => service.calls.some((call) => call.startsWith('DELETE')));
    expect(service.uploads.size).toBe(0);
    expect(store.list()).toEqual([]);
    expect(service.files).toEqual([]);
    const snapshot = await until(queue, () => true);
    expect(snapshot.totals).toMatchObject({ files: 0, active: 0 });
  });

  it('fails a file whose bytes changed during the upload (the server hash differs from the one read alongside), and Retry hashes it again', async () => {
    const { service, queue, hasher } = setup();
    service.corruptHash = true;
    service.holdAtOffset = 100; // until the hash read alongside is known
    const [id] = queue.add([{ source: fileOf('moving.log', 120), folder: 0 }]);
    await until2(() => service.calls.includes('FileAdd moving.log'));
    service.releaseAll();
    const failed = await until(queue, allIn('error', 'done'));
    expect(failed.items[0].error).toMatchObject({ code: 'Changed' });
    expect(service.uploads.size).toBe(0); // the wrong upload was deleted

    service.corruptHash = false;
    queue.resume(id);
    await until(queue, allIn('done'));
    expect(hasher.calls).toBe(2);
  });

  it('fails at once, as changed, a file the browser can no longer read (changed since it was picked), without waiting out the retries', async () => {
    const { service, queue, store } = setup({ retryDelaysMs: [60_000] });
    const file = fileOf('edited.doc', 300);
    let changedOnDisk = false;
    const unreadable = new Blob([]);
    unreadable.arrayBuffer = () => Promise.reject(new DOMException('The requested file could not be read', 'NotReadableError'));
    const source = { name: file.name, size: file.size, lastModified: file.lastModified, slice: (start?: number, end?: number) => (changedOnDisk ? unreadable : file.slice(start, end)) };
    service.holdAtOffset = 100;

    queue.add([{ source, folder: 0 }]);
    await until2(() => service.held.length === 1);
    changedOnDisk = true;
    service.releaseAll();
    const failed = await until(queue, allIn('error', 'done'), 2_000);

    expect(failed.items[0]).toMatchObject({ state: 'error', error: { code: 'Changed' } });
    expect(failed.items[0].retryAt).toBeUndefined();
    // Its upload holds bytes of the old version: deleted, and not offered for resuming.
    await until2(() => service.uploads.size === 0);
    expect(store.list()).toEqual([]);
  });

  it('announces progress at most once per interval, however many progress events arrive', async () => {
    const { service, queue } = setup({ progressIntervalMs: 200, chunkBytes: 1_000_000 });
    const original = service.patchUpload.bind(service);
    service.patchUpload = (url, offset, chunk, options) => {
      for (let sent = 1; sent <= 1000; sent++) options.onProgress?.(Math.floor((chunk.size * sent) / 1000));
      return original(url, offset, chunk, options);
    };
    let announcements = 0;
    queue.subscribe(() => announcements++);
    queue.add([{ source: fileOf('many-events.bin', 5000), folder: 0 }]);
    await until(queue, allIn('done'));
    expect(announcements).toBeLessThan(20);
  });

  it('never abandons a FileAdd under way: pausing while it runs ends in done, with one file, if it succeeded', async () => {
    const { service, queue } = setup();
    const file = fileOf('owned.txt', 64);
    service.owned.add(sha256(await bytesOf(file)));
    service.latencyMs = 30;
    const [id] = queue.add([{ source: file, folder: 0 }]);
    await until(queue, (snapshot) => snapshot.items[0]?.state === 'checking');
    queue.pause(id);
    const done = await until(queue, allIn('done', 'paused', 'error'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(queue.getSnapshot().items[0].state).toBe('done');
    expect(done.items).toHaveLength(1);
    expect(service.files).toHaveLength(1);
  });

  it('never abandons a FileAdd asked mid-transfer: pausing while it runs ends in done, with one file and no upload left, if it succeeded', async () => {
    const { service, queue } = setup();
    const file = fileOf('owned.iso', 400);
    service.owned.add(sha256(await bytesOf(file)));
    service.holdAtOffset = 100;
    const fileAdd = service.fileAdd.bind(service);
    let answer!: () => void;
    service.fileAdd = async (params) => {
      await new Promise<void>((resolve) => (answer = resolve));
      return fileAdd(params);
    };
    const [id] = queue.add([{ source: file, folder: 0 }]);
    await until2(() => answer !== undefined);

    queue.pause(id);
    await until(queue, allIn('paused'));
    answer();
    const done = await until(queue, allIn('done', 'error'));
    expect(done.items[0]).toMatchObject({ state: 'done', instant: true });
    expect(service.files).toHaveLength(1);
    await until2(() => service.uploads.size === 0);
  });

  it('keeps announcements few when thousands of small files finish one after another', async () => {
    const { service, queue } = setup({ progressIntervalMs: 200 });
    const files = Array.from({ length: 2000 }, (_, n) => fileOf(`small-${n}.txt`, 8, n));
    for (const file of files) service.owned.add(sha256(await bytesOf(file)));
    let announcements = 0;
    queue.subscribe(() => announcements++);
    queue.add(files.map((source) => ({ source, folder: 0 })));
    const done = await until(queue, (snapshot) => snapshot.totals.done === 2000, 20_000);
    expect(done.totals).toMatchObject({ files: 2000, done: 2000, active: 0 });
    expect(announcements).toBeLessThan(2000); // 3 state changes per file, announced together
  });

  it('recreates a dropped folder tree, reusing a folder that already has the name', async () => {
    const { service, queue } = setup();
    await service.folderAdd({ dirid: 0, name: 'Photos' }); // id 100
    service.calls.length = 0;

    queue.addTree(
      0,
      [
        { source: fileOf('a.jpg', 10, 1), dirs: ['Photos'] },
        { source: fileOf('b.jpg', 10, 2), dirs: ['Photos', '2024'] },
        { source: fileOf('c.jpg', 10, 3), dirs: ['Photos', '2024'] },
        { source: fileOf('loose.txt', 10, 4), dirs: [] },
      ],
      [['Photos'], ['Photos', '2024'], ['Photos', 'empty']],
    );
    const done = await until(queue, allIn('done', 'error'));

    expect(done.items.map((item) => item.state)).toEqual(['done', 'done', 'done', 'done']);
    expect(done.items.map((item) => item.relativePath)).toEqual(['Photos/a.jpg', 'Photos/2024/b.jpg', 'Photos/2024/c.jpg', undefined]);
    const year = service.folders.find((folder) => folder.name === '2024')!;
    expect(year.dir).toBe(100);
    expect(service.folders.find((folder) => folder.name === 'empty')?.dir).toBe(100);
    expect(service.files.map((file) => [file.name, file.dir])).toEqual(
      expect.arrayContaining([
        ['a.jpg', 100],
        ['b.jpg', year.id],
        ['c.jpg', year.id],
        ['loose.txt', 0],
      ]),
    );
    // Photos was created once (409), looked up once; 2024 once.
    expect(service.calls.filter((call) => call === 'FolderAdd 0/Photos')).toHaveLength(1);
    expect(service.calls.filter((call) => call === 'FolderAdd 100/2024')).toHaveLength(1);
  });

  it('gives a folder a numbered name when a file holds its name', async () => {
    const { service, queue } = setup();
    service.owned.add('x');
    await service.fileAdd({ name: 'Docs', ext: '', size: 0, dirid: 0, hash: 'x' });
    queue.addTree(0, [{ source: fileOf('d.txt', 5), dirs: ['Docs'] }]);
    await until(queue, allIn('done', 'error'));
    expect(service.folders.map((folder) => folder.name)).toEqual(['Docs (1)']);
  });
});

describe('helpers', () => {
  it('extensionOf follows the service: after the last dot, unless that dot is first or last', () => {
    expect(extensionOf('a.tar.GZ')).toBe('gz');
    expect(extensionOf('.profile')).toBe('');
    expect(extensionOf('README')).toBe('');
    expect(extensionOf('notes.')).toBe('');
  });

  it('hashBlob reads in slices and agrees with SHA-256 of the whole', async () => {
    const file = fileOf('x', 1000);
    const seen: number[] = [];
    const hash = await hashBlob(file, { sliceBytes: 300, onProgress: (bytes) => seen.push(bytes) });
    expect(hash).toBe(sha256(await bytesOf(file)));
    expect(seen).toEqual([300, 600, 900, 1000]);
    expect(await hashBlob(new Blob([]))).toBe(sha256(new Uint8Array()));
  });
});
