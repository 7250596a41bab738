/**
 * Result documents (DECISIONS.md §2): how each kind of operation result, and each refusal, is
 * written. The same writer serves SOAP (inside <OpResult>) and HTTP GET/POST (a whole document).
 */
import type { OperationSpec } from '../catalog/operations';
import type { OpResult } from '../operations/context';
import type { OpError } from '../operations/errors';
import type { Attributes, XmlWriter } from './xml-writer';

/** How a call ended: a result, a refusal (layer 2), or an unexpected failure logged as an incident (layer 3). */
export type Outcome =
  | { readonly kind: 'result'; readonly result: OpResult }
  | { readonly kind: 'refusal'; readonly refusal: OpError }
  | { readonly kind: 'incident'; readonly incident: string };

export type Answered = Exclude<Outcome, { kind: 'incident' }>;

/** ISO 8601 UTC to the second, as every time in a result document is written. */
export function isoTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function refusalAttributes(refusal: OpError): Attributes {
  return [['code', refusal.code], ['msg', refusal.message], ...Object.entries(refusal.details)];
}

/** The text of a string result (ShareImageUpload): its value, or `ERROR <code> <message>`. */
export function resultString(outcome: Answered): string {
  if (outcome.kind === 'refusal') return `ERROR ${outcome.refusal.code} ${outcome.refusal.message}`;
  const { result } = outcome;
  if (result.kind !== 'string') throw new Error(`a ${result.kind} result for a string operation`);
  return result.value;
}

/** Writes the result element of an XML-result operation. */
export async function writeResultElement(writer: XmlWriter, op: OperationSpec, outcome: Answered): Promise<void> {
  if (outcome.kind === 'refusal') {
    writer.empty('result', refusalAttributes(outcome.refusal));
    return;
  }
  const { result } = outcome;
  switch (result.kind) {
    case 'token':
      writer.textElement(
        'token',
        [
          ['uid', result.uid],
          ['key', result.key],
          ['expires', isoTime(result.expires)],
        ],
        result.token,
      );
      return;
    case 'tokenRefused':
      writer.textElement(
        'token',
        [
          ['reason', result.reason],
          ['retryAfter', result.retryAfter],
        ],
        '0',
      );
      return;
    case 'empty':
      writer.empty('result', [
        ['code', 0],
        ['msg', ''],
      ]);
      return;
    case 'string':
      throw new Error(`${op.name} returned a string but its catalog entry says ${op.result}`);
  }
}
