/**
 * Long work in slices: the service has one event loop, and on SQLite its database work runs on it
 * too, so a call that works for 500 ms without a pause makes every other call of every account
 * wait 500 ms. Work whose size grows with what an account holds (a listing of 100,000 items, a
 * subtree of 100,000 rows going to the bin) asks `due()` between steps and, when its slice is used
 * up, awaits `pause()`: the event loop then serves what arrived meanwhile before the work goes on.
 * bench/README.md, "Stalls", measures the longest hold per operation.
 */

/** How long work runs before it gives the event loop back. */
export const SLICE_MS = 10;

/**
 * When the service last took up a request (app.ts). The turn of the event loop that does a call's
 * work began no earlier, so a slice counted from it includes the call's checks and queries before
 * the long work: counted from the work's own start, those ran on top of a whole slice.
 */
let requestTakenAt = 0;

export function requestTaken(at: number): void {
  requestTakenAt = at;
}

export class TimeSlices {
  #started = requestTakenAt || performance.now();

  /** Whether the current slice is used up. */
  due(): boolean {
    return performance.now() - this.#started >= SLICE_MS;
  }

  /** Gives the event loop back (setImmediate: after the I/O that waits), then starts a new slice. */
  async pause(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#started = performance.now();
  }

  /** pause() when the slice is used up; nothing (no await, no microtask) otherwise. */
  pauseIfDue(): Promise<void> | undefined {
    return this.due() ? this.pause() : undefined;
  }
}

/** Gives the event loop back when the current call has held it for a slice (counted from when its request was taken up). */
export function pauseIfDue(): Promise<void> | undefined {
  return new TimeSlices().pauseIfDue();
}
