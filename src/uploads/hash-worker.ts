// SHA-256 of one file per message in a Web Worker, so hashing never blocks the page.
// In: { file } · Out: { type: 'progress', bytes } …, then { type: 'done', hash } or { type: 'error', message }
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
