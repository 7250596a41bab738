/**
 * Long work in slices: one event loop (and SQLite's work on it) means 500 ms without a pause delays every call by
 * 500 ms. Work that grows with an account asks `due()` between steps and awaits `pause()` (bench/README.md, "Stalls").
 */

/** How long work runs before it gives the event loop back. */
export const SLICE_MS = 10;

/** When the service last took up a request (app.ts): a slice counts from there, so the call's own checks are included. */
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
