/** The seam to the operations: a bound call in, an outcome out; anything but a typed OpError is an incident, logged with an id. */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import type { CallCaches } from '../operations/caches';
import type { BoundCall } from './asmx/binding';
import type { RequestFacts } from './http-common';
import type { Outcome } from './asmx/results';

export interface ProtocolEnv {
  readonly config: Config;
  /** The app's caches (operations/caches.ts): the listings' rendered answers are kept with them. */
  readonly caches: CallCaches;
  /** Runs a bound call: authentication, sign check, the operation. Never throws. */
  readonly invoke: (call: BoundCall, facts: RequestFacts) => Promise<Outcome>;
}

export function newIncidentId(): string {
  return randomBytes(6).toString('hex');
}
