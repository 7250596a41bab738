/** One file's run: name check, resume record, hash and instant upload (instant-upload.ts), transfer (transfer.ts), FileAdd. */
import { ApiError } from '../api/errors';
import { checkName, nameProblemMessage } from '../api/name-check';
import { deleteUpload, enter, finish, type Engine } from './engine';
import type { Entry } from './entry';
import { UploadFailure, fileChanged } from './failures';
import { fileAdd, hashFirst, sendWhileHashing } from './instant-upload';
import { dropChangedUpload, transfer } from './transfer';

/** Settles with `promise`, or rejects as soon as `signal` aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Runs `entry` until it is done; throws when it fails, or when `signal` aborts (a pause or cancel). */
export async function runFile(engine: Engine, entry: Entry, signal: AbortSignal): Promise<void> {
  const { source } = entry;
  // A name the service would refuse (its own rule: api/name-check.ts) is neither hashed nor sent.
  const badName = checkName(source.name);
  if (badName) throw new UploadFailure('InvalidArgument', nameProblemMessage(badName), badName);
  if (entry.folderId === null) {
    const folder = entry.folder;
    entry.folderId = typeof folder === 'number' ? folder : await abortable(folder(), signal);
    engine.progress.changed(entry, true);
  }

  engine.records.claim(entry, entry.folderId);
  let record = engine.records.usable(entry);
  if (entry.sha256 && record?.sha256 && record.sha256 !== entry.sha256) record = undefined;
  if (!entry.sha256 && record?.sha256) entry.sha256 = record.sha256;

  // One chunk or less: hash first, since an owned content then sends nothing to /upload/; a bigger file is sent at once (below).
  if (!entry.sha256 && !record && source.size <= engine.chunkBytes) {
    enter(engine, entry, 'hashing', signal);
    await hashFirst(engine, entry, signal);
  }

  if (entry.sha256 && !entry.checked) {
    enter(engine, entry, 'checking', signal);
    const owned = await fileAdd(engine, entry, entry.sha256, signal, true);
    entry.checked = true;
    if (owned) {
      // The account had the content: an unfinished upload of it is of no use now.
      if (record && entry.key) {
        engine.records.forget(entry);
        deleteUpload(engine, record.url);
      }
      finish(engine, entry, owned, true);
      return;
    }
  }

  enter(engine, entry, 'uploading', signal);
  const uploaded = entry.sha256 ? await transfer(engine, entry, record, signal) : await sendWhileHashing(engine, entry, record, signal);
  if (uploaded === null) return; // the content was the account's: finished without the rest of the bytes
  if (entry.sha256 && uploaded !== entry.sha256) {
    // The bytes that arrived are not the bytes that were hashed: the file changed meanwhile.
    dropChangedUpload(engine, entry);
    throw fileChanged();
  }

  enter(engine, entry, 'adding', signal);
  const file = await fileAdd(engine, entry, uploaded, signal, false);
  if (!file) throw new ApiError('NotFound', 'The service no longer has the upload. Try again.', {}, 404);
  finish(engine, entry, file, false);
}
