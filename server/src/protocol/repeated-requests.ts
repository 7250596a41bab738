/**
 * SOAP requests read once per text. A client polling a folder sends, call after call, the very same
 * envelope (the same token, parameters and sign), and reading it (the envelope scanned, the
 * operation found, every parameter converted and bound) is a pure function of its text and of what
 * the request said around it: the service, the SOAP version of its content type, its action and its
 * size. So what a text read to is kept, by the text, and a request that repeats one exactly is
 * bound to the same call without reading it again.
 *
 * Only the reading is kept: the call still goes through everything after it on every request (the
 * token, the sign, the folder checks, the operation). Only requests that were read to a call, of
 * at most MAX_TEXT characters, with plain values (no bytes, which an operation might hold on to);
 * a refused one is read (and refused) every time. Bounded: MAX_ENTRIES, least recently used first.
 */
import type { OperationSpec, ServiceName } from '../catalog/operations';
import type { BoundCall } from './binding';
import type { SoapVersion } from './faults';

/** What a SOAP request was read to. */
export interface SoapReading {
  /** The operation it calls. */
  readonly op: OperationSpec;
  /** The SOAP version of its envelope, which the answer is in. */
  readonly answerVersion: SoapVersion;
  readonly call: BoundCall;
}

/** What else decides a reading besides the text. */
export interface RequestSetting {
  readonly service: ServiceName;
  /** The version the content type asks for. */
  readonly version: SoapVersion;
  /** The action the headers named, if any. */
  readonly action: string | undefined;
  /** The body's size in bytes (the same text in another encoding is another size). */
  readonly bodyBytes: number;
}

export const MAX_ENTRIES = 1_000;
export const MAX_TEXT = 8 * 1024;

interface Entry extends RequestSetting {
  readonly reading: SoapReading;
}

export class RepeatedRequests {
  readonly #byText = new Map<string, Entry>();

  get size(): number {
    return this.#byText.size;
  }

  /** The reading of this exact text in this setting, if it was read before and is still kept. */
  get(text: string, setting: RequestSetting): SoapReading | undefined {
    const entry = this.#byText.get(text);
    if (!entry || !sameSetting(entry, setting)) return undefined;
    this.#byText.delete(text);
    this.#byText.set(text, entry);
    return entry.reading;
  }

  put(text: string, setting: RequestSetting, reading: SoapReading): void {
    if (text.length > MAX_TEXT || !plainValues(reading.call)) return;
    this.#byText.delete(text);
    if (this.#byText.size >= MAX_ENTRIES) this.#byText.delete(this.#byText.keys().next().value as string);
    const call = Object.freeze({ ...reading.call, values: Object.freeze({ ...reading.call.values }), text: Object.freeze({ ...reading.call.text }) });
    this.#byText.set(text, { ...setting, reading: Object.freeze({ ...reading, call }) });
  }
}

function sameSetting(a: RequestSetting, b: RequestSetting): boolean {
  return a.service === b.service && a.version === b.version && a.action === b.action && a.bodyBytes === b.bodyBytes;
}

/** Whether every value of the call is a primitive: nothing an operation could change or keep a hold on. */
function plainValues(call: BoundCall): boolean {
  return Object.values(call.values).every((value) => value === null || typeof value !== 'object');
}
