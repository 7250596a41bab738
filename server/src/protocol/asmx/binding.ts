/** From the parameters as they arrived (SOAP elements, HTTP fields) to typed values, by the catalog and ASMX's rules. */
import type { OperationSpec, WireType } from '../../catalog/operations';
import { isNil, linePosition, offsetAfter, type XmlElement } from './xml-reader';
import { ConversionError, decodeBase64, decodeByteArray, FORMAT_MESSAGE, parseInt32, parseLong, type FormValues } from './wire-values';
import { messages } from './faults';
import { invalidArgument } from '../../operations/errors';
import type { Answered } from './results';

export type BoundValue = bigint | number | string | Buffer | null;

export interface BoundCall {
  readonly op: OperationSpec;
  readonly values: Readonly<Record<string, BoundValue>>;
  /** Each parameter's text exactly as sent ('' when absent or nil): what the sign covers. */
  readonly text: Readonly<Record<string, string>>;
}

/** What SOAP answers when a value cannot be read: a client fault at a position in the document. */
export class SoapValueError extends Error {
  constructor(
    readonly line: number,
    readonly position: number,
    readonly inner: string,
  ) {
    super(inner);
  }
}

/** base64 that does not decode: ASMX answers 400 with an empty body, like XML that does not parse. */
export class SoapBase64Error extends Error {}

/** What HTTP GET/POST answer when a parameter is missing or cannot be converted: plain text. */
export class FormBindingError extends Error {}

const DEFAULTS: Record<WireType, BoundValue> = { long: 0n, int: 0, string: null, base64Binary: null };

function convertScalar(type: WireType, text: string): BoundValue {
  switch (type) {
    case 'long':
      return parseLong(text);
    case 'int':
      return parseInt32(text);
    case 'string':
      return text;
    case 'base64Binary':
      throw new Error('byte arrays are converted by their binding');
  }
}

/**
 * SOAP: each parameter is the first child of the operation element with its name in the service namespace; absent →
 * default, `<p/>` → "", xsi:nil → null. `operationElement` null: some other element (ASMX binds defaults).
 */
export function bindSoapParameters(
  op: OperationSpec,
  operationElement: XmlElement | null,
  namespace: string,
  source: string,
): BoundCall {
  const found = new Map<string, XmlElement>();
  for (const child of operationElement?.children ?? []) {
    if (child.ns === namespace && !found.has(child.local)) found.set(child.local, child);
  }
  // Values are read in document order, so the first bad one is the one reported, as .NET does.
  const present = op.params
    .filter((p) => found.has(p.name))
    .sort((a, b) => found.get(a.name)!.nameOffset - found.get(b.name)!.nameOffset);
  const values: Record<string, BoundValue> = {};
  const text: Record<string, string> = {};
  for (const param of op.params) {
    values[param.name] = DEFAULTS[param.type];
    text[param.name] = '';
  }
  for (const param of present) {
    const element = found.get(param.name)!;
    const fail = (inner: string): never => {
      const { line, position } = linePosition(source, offsetAfter(source, element));
      throw new SoapValueError(line, position, inner);
    };
    if (element.children.length > 0) fail(`The '${param.name}' element has element content; a value was expected.`);
    if (isNil(element)) {
      if (param.type === 'long' || param.type === 'int') fail(FORMAT_MESSAGE);
      continue;
    }
    text[param.name] = element.text;
    if (param.type === 'base64Binary') {
      const bytes = decodeBase64(element.text);
      if (!bytes) throw new SoapBase64Error('invalid base64');
      values[param.name] = bytes;
      continue;
    }
    try {
      values[param.name] = convertScalar(param.type, element.text);
    } catch (error) {
      if (error instanceof ConversionError) fail(error.message);
      throw error;
    }
  }
  return { op, values, text };
}

/** bindSoapParameters over texts by name (from common-envelope.ts); undefined when a value does not convert. */
export function bindParameterTexts(op: OperationSpec, textOf: (name: string) => string | undefined): BoundCall | undefined {
  const values: Record<string, BoundValue> = {};
  const text: Record<string, string> = {};
  for (const param of op.params) {
    const given = textOf(param.name);
    text[param.name] = given ?? '';
    if (given === undefined) {
      values[param.name] = DEFAULTS[param.type];
    } else if (param.type === 'base64Binary') {
      const bytes = decodeBase64(given);
      if (!bytes) return undefined;
      values[param.name] = bytes;
    } else {
      try {
        values[param.name] = convertScalar(param.type, given);
      } catch (error) {
        if (error instanceof ConversionError) return undefined;
        throw error;
      }
    }
  }
  return { op, values, text };
}

/** HTTP GET/POST: every parameter required; names case-insensitive; repeats joined with ','; byte[] one value per byte or base64. */
export function bindFormParameters(op: OperationSpec, form: FormValues): BoundCall {
  const values: Record<string, BoundValue> = {};
  const text: Record<string, string> = {};
  for (const param of op.params) {
    const entry = form.get(param.name.toLowerCase());
    if (!entry) throw new FormBindingError(messages.missingParameter(param.name));
    const joined = entry.values.join(',');
    text[param.name] = joined;
    try {
      values[param.name] = param.type === 'base64Binary' ? decodeByteArray(entry.values) : convertScalar(param.type, joined);
    } catch (error) {
      if (!(error instanceof ConversionError)) throw error;
      const shown = param.type === 'base64Binary' ? (entry.values.find(notAByte) ?? joined) : joined;
      throw new FormBindingError(messages.cannotConvert(shown, error.dotnetType, error.message));
    }
  }
  return { op, values, text };
}

function notAByte(value: string): boolean {
  return !/^\s*\+?\d+\s*$/.test(value) || Number(value.trim()) > 255;
}

/**
 * Refuses a NUL in any text parameter (docs/protocol.md §2.2): only `%00` in an HTTP form can bring one, and
 * PostgreSQL text cannot hold it, so it is a 400 on both engines rather than stored altered.
 */
export function refusedWhileBinding(call: BoundCall): Answered | null {
  const param = call.op.params.find((p) => p.type === 'string' && typeof call.values[p.name] === 'string' && (call.values[p.name] as string).includes('\u0000'));
  if (!param) return null;
  // Login and APILogin refuse with <token>0</token>, never with a <result> document.
  if (call.op.result === 'token') return { kind: 'result', result: { kind: 'tokenRefused', reason: 'invalid' } };
  return { kind: 'refusal', refusal: invalidArgument('nul-character', `${param.name} may not contain NUL characters`) };
}
