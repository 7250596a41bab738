// Reads a listing from the response body in slices of a few milliseconds, yielding between them so the page stays responsive;
// the items so far are handed out now and then (`onProgress`), the first as soon as there are any.
import type { Listing } from './results';
import { ListingReader } from './listing-reader';

export interface ListingStreamOptions {
  /** The items read so far (`partial: true`), now and then while the answer arrives. */
  readonly onProgress?: (listing: Listing) => void;
  readonly signal?: AbortSignal;
}

/** Bytes read between two looks at the clock: a few hundred items. */
const SLICE_BYTES = 16 * 1024;
/** How long one task may read before it lets the page run (well under the 50 ms of a long task). */
const TASK_BUDGET_MS = 8;
/** How often the items read so far are handed out after the first time. */
const PROGRESS_INTERVAL_MS = 250;

interface Scheduler {
  readonly yield?: () => Promise<void>;
}

/** Ends the current task and continues in a new one: scheduler.yield where there is one. */
function nextTask(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: Scheduler }).scheduler;
  if (typeof scheduler?.yield === 'function') return scheduler.yield();
  return new Promise((resolve) => {
    // A message, unlike setTimeout, is not held back by the 4 ms clamp of nested timers.
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

/** Stops early once the top element settles the call (a refusal). */
export async function readListingStream(body: ReadableStream<Uint8Array>, options: ListingStreamOptions = {}): Promise<ListingReader> {
  const { onProgress, signal } = options;
  const reader = new ListingReader();
  const stream = body.getReader();
  let taskStart = performance.now();
  let handedOut = -1;
  let lastProgress = 0;
  const itemsRead = () => reader.folders.length + reader.files.length;

  const progress = (force: boolean) => {
    if (!onProgress || reader.settled || !reader.root) return;
    const items = itemsRead();
    if (items === 0 || items === handedOut) return;
    const now = performance.now();
    if (!force && handedOut >= 0 && now - lastProgress < PROGRESS_INTERVAL_MS) return;
    handedOut = items;
    lastProgress = now;
    onProgress(reader.listing(true));
  };

  try {
    for (;;) {
      const { done, value } = await stream.read();
      if (done) break;
      signal?.throwIfAborted();
      for (let offset = 0; offset < value.length; offset += SLICE_BYTES) {
        reader.push(offset === 0 && value.length <= SLICE_BYTES ? value : value.subarray(offset, offset + SLICE_BYTES));
        if (reader.settled) break;
        if (performance.now() - taskStart >= TASK_BUDGET_MS) {
          // The first items go out at once; then at most every PROGRESS_INTERVAL_MS.
          progress(handedOut < 0);
          await nextTask();
          signal?.throwIfAborted();
          taskStart = performance.now();
        }
      }
      if (reader.settled) {
        await stream.cancel().catch(() => {});
        return reader;
      }
      progress(handedOut < 0);
    }
    reader.end();
    return reader;
  } catch (error) {
    // Stop the transfer too: nothing more will be read.
    stream.cancel().catch(() => {});
    throw error;
  } finally {
    stream.releaseLock();
  }
}
