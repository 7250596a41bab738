/** The shutdown state of an instance (`fss serve` on SIGTERM, server.ts): /readyz reads it to answer 503 while draining. */
import type { Services } from '../context';
import { uploadLockerOf } from '../content/upload-locks';

const shutting = new WeakSet<Services>();

/** From now on the instance is shutting down: uploads in flight end their PATCH with what arrived and let go of their locks. */
export function beginShutdown(services: Services): void {
  shutting.add(services);
  uploadLockerOf(services).drain();
}

/** Whether the instance of `services` is shutting down (draining its requests in flight). */
export function shuttingDown(services: Services): boolean {
  return shutting.has(services);
}
