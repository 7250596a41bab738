// The one place that talks to the service: ASMX HTTP POST, uid and token from the session, `sign` computed here (DECISIONS.md §5).
// Callers see typed results or ApiErrors, never HTTP.
import { XMLParser } from 'fast-xml-parser';
import { ApiError, detailsFrom, resultCodeName } from './errors';
import type { ListingReader } from './listing-reader';
import type { OperationDescriptor, ResultKind, WireType } from './generated/operations';
import { readListingStream } from './listing-stream';
import { PREDEFINED, REPEATED_ELEMENTS, elementText, type Listing, type XmlElement } from './results';
import { session as defaultSession, type Session, type SessionStore } from './session';

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Listings only: the items so far while a big answer arrives (`partial: true`); the promise still resolves to the whole listing. */
  readonly onProgress?: (listing: Listing) => void;
}

export interface Transport {
  /** The top element of a successful answer (`<token>`, `<result>` or `<string>`); ApiError for anything else. */
  call(descriptor: OperationDescriptor, params: Readonly<Record<string, unknown>>, options?: CallOptions): Promise<XmlElement>;
  /** A listing, typed, read as it streams in (listing-stream.ts). */
  listing(descriptor: OperationDescriptor, params: Readonly<Record<string, unknown>>, options?: CallOptions): Promise<Listing>;
}

export interface TransportOptions {
  readonly fetch?: typeof globalThis.fetch;
  /** Prefix of the service paths; '' (the default) is the page's own origin. */
  readonly baseUrl?: string;
  readonly session?: SessionStore;
  /** The app's current language, sent as Accept-Language: the service writes share e-mails in it. */
  readonly language?: () => string;
}

function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    // A lone surrogate cannot be sent as UTF-8.
    throw new ApiError('InvalidArgument', 'The text contains a character that cannot be sent.');
  }
}

/** `Operation\nname=value&…`: every parameter but sign, sorted by UTF-16 code unit (`downValue` before `downpwd`), values URI-encoded. */
export function canonicalString(operation: string, values: Readonly<Record<string, string>>): string {
  const pairs = Object.keys(values)
    .filter((name) => name !== 'sign')
    .sort()
    .map((name) => `${name}=${encode(values[name])}`);
  return `${operation}\n${pairs.join('&')}`;
}

const utf8 = new TextEncoder();
let cachedKey: { readonly text: string; readonly key: Promise<CryptoKey> } | undefined;

function hmacKey(text: string): Promise<CryptoKey> {
  if (cachedKey?.text !== text) {
    const key = crypto.subtle.importKey('raw', utf8.encode(text), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    cachedKey = { text, key };
  }
  return cachedKey.key;
}

/** Lowercase hex HMAC-SHA256 of the canonical string, keyed with the UTF-8 bytes of the session key. */
export async function computeSign(key: string, operation: string, values: Readonly<Record<string, string>>): Promise<string> {
  const mac = await crypto.subtle.sign('HMAC', await hmacKey(key), utf8.encode(canonicalString(operation, values)));
  return Array.from(new Uint8Array(mac), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function wireText(operation: string, name: string, type: WireType, value: unknown): string {
  if (type === 'long' || type === 'int') {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
      throw new TypeError(`${operation}: parameter ${name} must be a whole number, got ${String(value)}`);
    }
    return String(value);
  }
  if (type === 'base64Binary') {
    if (!(value instanceof Uint8Array)) throw new TypeError(`${operation}: parameter ${name} must be a Uint8Array`);
    return base64(value);
  }
  if (typeof value !== 'string') throw new TypeError(`${operation}: parameter ${name} must be a string, got ${String(value)}`);
  return value;
}

// Only the predefined entities and character references: newlines come as &#xA;.
const xmlEntities = {
  decode: (text: string) =>
    text.replace(/&(?:#(\d+)|#x([0-9a-fA-F]+)|(lt|gt|amp|quot|apos));/g, (reference, dec?: string, hex?: string, name?: string) => {
      if (name) return PREDEFINED[name];
      const codePoint = dec ? Number(dec) : parseInt(hex ?? '', 16);
      return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : reference;
    }),
  setExternalEntities: () => {},
  addInputEntities: () => {},
  reset: () => {},
  setXmlVersion: () => {},
};

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  textNodeName: '#text',
  // Keep every value as the text that was sent: a file named "007" stays "007"; results.ts types them.
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  entityDecoder: xmlEntities,
  isArray: (name, _path, _leaf, isAttribute) => !isAttribute && REPEATED_ELEMENTS.has(name),
});

/** The top element of an XML answer and its name; undefined when the text is no XML document. */
export function parseXml(text: string): { readonly root: string; readonly element: XmlElement } | undefined {
  let document: Record<string, unknown>;
  try {
    document = xml.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const root = Object.keys(document).find((name) => !name.startsWith('#') && !name.startsWith('?'));
  if (!root) return undefined;
  const value = document[root];
  const element = typeof value === 'object' && value !== null ? (value as XmlElement) : { '#text': String(value ?? '') };
  return { root, element };
}

const rootOf = (kind: ResultKind) => (kind === 'token' ? 'token' : kind === 'string' ? 'string' : 'result');

/** A refusal in a 200 answer as an ApiError, or undefined when the answer is a success. */
export function refusalOf(root: string, element: XmlElement): ApiError | undefined {
  if (root === 'token') {
    if (elementText(element).trim() !== '0') return undefined;
    const details = detailsFrom(element, []);
    const throttled = details.reason === 'throttled';
    return new ApiError(
      'LoginRefused',
      throttled ? 'Too many login attempts: wait, then try again.' : 'Wrong account name or password.',
      details,
    );
  }
  if (root === 'result') {
    const codeText = typeof element.code === 'string' ? element.code.trim() : '0';
    if (codeText === '0') return undefined;
    const code = Number(codeText);
    const message = typeof element.msg === 'string' && element.msg ? element.msg : `The service refused the call (code ${codeText}).`;
    return new ApiError(resultCodeName(code), message, detailsFrom(element, ['code', 'msg', 'count']), code);
  }
  if (root === 'string') {
    // ShareImageUpload's failure form: "ERROR <code> <message>".
    const failure = /^ERROR (\d+)\s*(.*)$/s.exec(elementText(element).trim());
    if (!failure) return undefined;
    const code = Number(failure[1]);
    return new ApiError(resultCodeName(code), failure[2] || `The service refused the call (code ${code}).`, {}, code);
  }
  return undefined;
}

function plainTextMessage(response: Response, body: string): string {
  const type = response.headers.get('content-type') ?? '';
  const text = body.trim();
  if (text && !type.includes('html') && text.length <= 2000) return text;
  return `The service answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}.`;
}

export function createTransport(options: TransportOptions = {}): Transport {
  // Looked up per call and called unbound-safe: window.fetch throws "Illegal invocation" when detached.
  const doFetch: typeof globalThis.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
  const sessions = options.session ?? defaultSession;

  /** Sends the call; answers the response (any status) and the session it was made with. */
  async function send(
    descriptor: OperationDescriptor,
    params: Readonly<Record<string, unknown>>,
    callOptions: CallOptions,
  ): Promise<{ readonly response: Response; readonly current: Session | null }> {
    const { name: operation, auth } = descriptor;
    let current: Session | null = null;
    if (auth !== 'none') {
      current = sessions.get();
      if (!current) throw new ApiError('Unauthorized', 'You are not logged in.', {}, 401);
    }

    const values: Record<string, string> = {};
    for (const { name, type } of descriptor.params) {
      if (current && name === 'uid') values.uid = String(current.uid);
      else if (current && name === 'token') values.token = current.token;
      else if (auth === 'signed' && name === 'sign') continue;
      else values[name] = wireText(operation, name, type, params[name]);
    }
    if (current && auth === 'signed') values.sign = await computeSign(current.key, operation, values);

    // In catalog order, sign last: what ASMX's own clients send.
    const body = descriptor.params
      .filter(({ name }) => name in values)
      .map(({ name }) => `${encode(name)}=${encode(values[name])}`)
      .join('&');

    try {
      const response = await doFetch(`${baseUrl}/${descriptor.service}.asmx/${operation}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'text/xml',
          ...(options.language ? { 'Accept-Language': options.language() } : {}),
        },
        body,
        signal: callOptions.signal,
        credentials: 'same-origin',
      });
      return { response, current };
    } catch (error) {
      if (callOptions.signal?.aborted) throw error;
      throw new ApiError('Network', 'Cannot reach the service. Check the connection and try again.');
    }
  }

  /** A refusal becomes an ApiError; a 401 also ends the session it was made with. */
  function refuse(refusal: ApiError, current: Session | null): never {
    if (refusal.code === 'Unauthorized' && current) sessions.unauthorized(current.token);
    throw refusal;
  }

  return {
    async call(descriptor, params, callOptions = {}) {
      const { response, current } = await send(descriptor, params, callOptions);
      const text = await response.text();
      if (!response.ok) throw new ApiError('Protocol', plainTextMessage(response, text), {}, response.status);

      const answer = parseXml(text);
      if (!answer) throw new ApiError('Protocol', 'The service answered with something that is not XML.', {}, response.status);
      const refusal = refusalOf(answer.root, answer.element);
      if (refusal) refuse(refusal, current);
      if (answer.root !== rootOf(descriptor.result)) {
        throw new ApiError('Protocol', `The service answered <${answer.root}> where <${rootOf(descriptor.result)}> was expected.`);
      }
      return answer.element;
    },

    async listing(descriptor, params, callOptions = {}) {
      const { response, current } = await send(descriptor, params, callOptions);
      if (!response.ok || !response.body) {
        throw new ApiError('Protocol', plainTextMessage(response, await response.text()), {}, response.status);
      }
      let reader: ListingReader;
      try {
        reader = await readListingStream(response.body, { onProgress: callOptions.onProgress, signal: callOptions.signal });
      } catch (error) {
        if (callOptions.signal?.aborted || error instanceof ApiError) throw error;
        throw new ApiError('Network', 'Cannot reach the service. Check the connection and try again.');
      }
      if (reader.rootName !== 'result' || !reader.root) {
        throw new ApiError('Protocol', `The service answered <${reader.rootName ?? '?'}> where <result> was expected.`);
      }
      const refusal = refusalOf('result', reader.root);
      if (refusal) refuse(refusal, current);
      return reader.listing(false);
    },
  };
}
