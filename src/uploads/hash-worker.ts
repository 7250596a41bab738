/**
 * The hashing Web Worker: SHA-256 of one file per message, so that hashing a big file never
 * blocks the page. Started by createWorkerHasher (browser.ts), one worker per file, terminated
 * when done or cancelled.
 *
 * In:  { file: Blob }
 * Out: { type: 'progress', bytes } …, then { type: 'done', hash } or { type: 'error', message }
 */
import { hashBlob } from './hash';

export type HashWorkerRequest = { readonly file: Blob };
export type HashWorkerMessage =
  | { readonly type: 'progress'; readonly bytes: number }
  | { readonly type: 'done'; readonly hash: string }
  | { readonly type: 'error'; readonly message: string };

const post = (message: HashWorkerMessage) => (self as unknown as Worker).postMessage(message);

self.addEventListener('message', (event: MessageEvent<HashWorkerRequest>) => {
  hashBlob(event.data.file, { onProgress: (bytes) => post({ type: 'progress', bytes }) }).then(
    (hash) => post({ type: 'done', hash }),
    (error: unknown) => post({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
  );
});
