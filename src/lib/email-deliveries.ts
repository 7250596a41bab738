/** Message states (docs/protocol.md §16.5): `queued` (with the last error while retried), `sent`, `failed`; no separate "sending" state. */

/** What the state is read from (api/results.ts's EmailRecipient). */
interface Delivery {
  readonly status: string;
  readonly error?: string;
}

export type DeliveryState = 'queued' | 'retrying' | 'sent' | 'failed';

export function deliveryState(email: Delivery): DeliveryState {
  if (email.status === 'sent') return 'sent';
  if (email.status === 'failed') return 'failed';
  // queued, or a status this client does not know yet (a newer service): still on its way
  return email.error ? 'retrying' : 'queued';
}

/** How often to ask again while messages wait for their first attempt: the sender runs every 5 s. */
export const POLL_QUEUED_MS = 2_000;
/** A failed attempt is retried after a minute at the soonest: no need to ask as often. */
export const POLL_RETRYING_MS = 15_000;

/** The history's refetch interval: while anything is on its way, and never once all are final. */
export function pollInterval(emails: readonly Delivery[] | undefined): number | false {
  if (!emails) return false;
  let retrying = false;
  for (const email of emails) {
    const state = deliveryState(email);
    if (state === 'queued') return POLL_QUEUED_MS;
    if (state === 'retrying') retrying = true;
  }
  return retrying ? POLL_RETRYING_MS : false;
}

export interface DeliverySummary {
  readonly sent: number;
  /** Queued or being retried. */
  readonly waiting: number;
  readonly failed: number;
}

export function summarizeDeliveries(emails: readonly Delivery[]): DeliverySummary {
  let sent = 0;
  let waiting = 0;
  let failed = 0;
  for (const email of emails) {
    const state = deliveryState(email);
    if (state === 'sent') sent++;
    else if (state === 'failed') failed++;
    else waiting++;
  }
  return { sent, waiting, failed };
}
