/**
 * The hostile corpus: for one operation in one call form, every hostile request of every category,
 * each with the answer DECISIONS.md §3 gives it. Built from the catalog, so a new operation or
 * parameter is attacked without anyone listing it here; a parameter name the corpus has no ordinary
 * value for fails the build of the corpus (see BASE).
 *
 * Every request starts from an inert call: ids point at nothing, so no attack that gets through
 * the binding can change anything, and the snapshot around each group proves it.
 */
import { operations, type OperationSpec, type ParamSpec } from '../../../src/catalog/operations';
import { validName } from '../../../src/operations/tree/names';
import { ConversionError, decodeByteArray, decodeBase64, parseInt32, parseLong } from '../../../src/protocol/asmx/wire-values';
import type { Form } from '../../helpers/requests';
import { forOperation, refused, REFUSAL_CODES, type Expected } from './answers';
import {
  envelope,
  formEncoded,
  formRequest,
  NAMESPACE,
  operationElement,
  signFor,
  soapRequest,
  type ParamTexts,
  type RawRequest,
} from './wire';
import { MISSING_ID, type World } from './world';

export interface HostileCase {
  readonly category: Category;
  readonly label: string;
  readonly request: RawRequest;
  readonly expected: Expected;
}

export const CATEGORIES = [
  'xxe',
  'entity-bomb',
  'dtd',
  'deep-nesting',
  'huge-body',
  'invalid-utf8',
  'nul',
  'names',
  'traversal',
  'sql',
  'id-lists',
  'numbers',
  'base64',
  'content-type',
  'missing-param',
  'duplicate-param',
] as const;
export type Category = (typeof CATEGORIES)[number];

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const MAX_BODY = 1024 * 1024;
const MAX_NAME = 255;

/**
 * The ordinary, inert value of each parameter name of the catalog. A new parameter name must be
 * given one here: the corpus refuses to guess.
 */
const BASE: Record<string, (world: World, op: OperationSpec) => string> = {
  uid: (w, op) => (op.auth === 'none' ? 'no-such-account' : String(w.alice.uid)),
  token: (w) => w.alice.token,
  pwd: () => 'wrong-password-1',
  sid: () => 'not-an-api-key',
  dirid: () => String(MISSING_ID),
  // With a dirid beside it (Unlock, Decrypt: exactly one of them is non-zero), fid is the unused 0.
  fid: (_w, op) => (op.params.some((p) => p.name === 'dirid') ? '0' : String(MISSING_ID)),
  todir: () => String(MISSING_ID),
  dirids: () => String(MISSING_ID),
  fids: () => String(MISSING_ID),
  dir: () => String(MISSING_ID),
  is_real: () => '0',
  order: () => 'name',
  desc: () => '0',
  keyword: () => 'probe',
  // A name the root already holds: FolderAdd into the root (a SOAP call without dirid) is a 409.
  name: () => 'Docs',
  newname: () => 'Docs',
  names: () => 'Docs/probe.txt',
  ext: () => '',
  size: () => '10',
  hash: () => 'a'.repeat(64),
  password: () => 'probe-pass',
  password_tip: () => 'a hint',
  downpwd: () => '',
  downValue: () => '0',
  description: () => 'a description',
  to: () => 'friend@example.com',
  ImagefileName: () => 'cover.png',
  byteFileStream: () => PNG.toString('base64'),
  code: () => 'no-such-share-code',
};

const authParams = (op: OperationSpec): ReadonlySet<string> => new Set(op.auth === 'none' ? [] : op.params.map((p) => p.name).filter((n) => n === 'uid' || n === 'token' || n === 'sign'));

/** The parameters an attack on values goes into: everything but uid, token and sign. */
export const valueParams = (op: OperationSpec) => op.params.filter((p) => !authParams(op).has(p.name));

/** Operations whose every parameter is uid/token/sign (Logout, RecycleEmpty) would succeed inert: they are sent with a wrong sign. */
const onlyAuth = (op: OperationSpec) => op.auth === 'signed' && valueParams(op).length === 0;

/** A listing may answer (code 0) an inert call: it changes nothing. */
const readsOnly = (op: OperationSpec) => op.result === 'listing' || op.result === 'pathListing';

export function baseTexts(world: World, op: OperationSpec): ParamTexts {
  const texts: ParamTexts = {};
  for (const p of op.params) {
    if (p.name === 'sign') continue;
    const base = BASE[p.name];
    if (!base) throw new Error(`the hostile corpus has no ordinary value for parameter ${p.name} of ${op.name}: add one to BASE`);
    texts[p.name] = base(world, op);
  }
  return texts;
}

/** Signs the texts as the caller would (a wrong sign for an operation that would succeed inert). */
export function signed(world: World, op: OperationSpec, texts: ParamTexts): ParamTexts {
  if (!op.params.some((p) => p.name === 'sign') || 'sign' in texts) return texts;
  return { ...texts, sign: onlyAuth(op) ? '0'.repeat(64) : signFor(op, world.alice.key, texts) };
}

/** The texts with one parameter replaced; FileAdd's ext follows a new name, so that the name is what is judged. */
function withValue(op: OperationSpec, base: ParamTexts, param: string, text: string | undefined): ParamTexts {
  const texts = { ...base, [param]: text };
  if (param === 'name' && 'ext' in base && text !== undefined) {
    const dot = text.lastIndexOf('.');
    texts.ext = dot > 0 && dot < text.length - 1 ? text.slice(dot + 1).toLowerCase() : '';
  }
  return texts;
}

/** The answer to an inert call (nothing hostile in it). */
export function inertAnswer(op: OperationSpec): Expected {
  if (onlyAuth(op)) return refused('403');
  return forOperation({ kind: 'refused', codes: REFUSAL_CODES, readOk: readsOnly(op) }, op);
}

// eslint-disable-next-line no-control-regex
const NOT_XML_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const isSoap = (form: Form) => form === 'soap11' || form === 'soap12';

function conversionError(param: ParamSpec, text: string): ConversionError | null {
  try {
    if (param.type === 'long') parseLong(text);
    else parseInt32(text);
    return null;
  } catch (error) {
    if (error instanceof ConversionError) return error;
    throw error;
  }
}

/**
 * What one parameter text gets, in a call otherwise inert and correctly signed: DECISIONS.md §3's
 * layer 1 when it cannot be bound, else the operation's refusal (names as names.ts decides them;
 * NUL refused with 400 before any operation runs; a wrong uid or token 401, a wrong sign 403).
 */
export function answerTo(world: World, op: OperationSpec, form: Form, param: ParamSpec, text: string): Expected {
  if (isSoap(form) && NOT_XML_CHARS.test(text)) return { kind: 'empty400' };
  if (param.type === 'long' || param.type === 'int') {
    const error = conversionError(param, text);
    if (error) {
      return isSoap(form)
        ? { kind: 'fault', code: 'Client', text: error.message }
        : { kind: 'plain', text: `Cannot convert ${text} to ${error.dotnetType}.\nParameter name: type ---> ${error.message}\n` };
    }
  }
  if (!isSoap(form) && text.includes('\u0000') && param.type === 'string') return forOperation(refused('400'), op);
  const auth = authParams(op);
  if (auth.has(param.name)) {
    if (param.name === 'sign') return text === signFor(op, world.alice.key, baseTexts(world, op)) ? inertAnswer(op) : refused('403');
    if (param.name === 'uid' && conversionError(param, text) === null && BigInt(text.trim()) === BigInt(world.alice.uid)) return inertAnswer(op);
    if (param.name === 'token' && text === world.alice.token) return inertAnswer(op);
    return refused('401');
  }
  if (onlyAuth(op)) return refused('403');
  if (param.name === 'name' || param.name === 'newname') {
    try {
      validName(text, MAX_NAME);
    } catch {
      return refused('400');
    }
    return refused('404');
  }
  return inertAnswer(op);
}

/** A request of an ordinary shape in this form, carrying these texts. */
function request(op: OperationSpec, form: Form, texts: ParamTexts): RawRequest {
  switch (form) {
    case 'soap11':
      return soapRequest(op, '1.1', envelope('1.1', operationElement(op, texts)));
    case 'soap12':
      return soapRequest(op, '1.2', envelope('1.2', operationElement(op, texts)));
    default:
      return formRequest(op, form, formEncoded(op, texts));
  }
}

/**
 * One case per (parameter, value): the value in that parameter of an inert, signed call. With
 * `perParam`, each parameter gets that many of the values, in turn, so that every value meets
 * every form and many operations without the whole cross product.
 */
function valueCases(
  world: World,
  op: OperationSpec,
  form: Form,
  category: Category,
  params: readonly ParamSpec[],
  values: readonly string[],
  perParam = values.length,
): HostileCase[] {
  const base = baseTexts(world, op);
  const cases: HostileCase[] = [];
  const opIndex = operations.indexOf(op as (typeof operations)[number]);
  for (const [paramIndex, param] of params.entries()) {
    for (let k = 0; k < perParam; k++) {
      const value = values[(opIndex * 3 + paramIndex * perParam + k) % values.length];
      const texts = signed(world, op, withValue(op, base, param.name, value));
      cases.push({ category, label: `${param.name}=${JSON.stringify(value.slice(0, 60))}`, request: request(op, form, texts), expected: answerTo(world, op, form, param, value) });
    }
  }
  return cases;
}

/** The parameter an attack on the document as a whole rides in: the first value parameter that is a string, else the token. */
function carrier(op: OperationSpec): ParamSpec {
  return valueParams(op).find((p) => p.type === 'string') ?? op.params.find((p) => p.name === 'token') ?? op.params[0];
}

/**
 * An attack on the XML document. SOAP 1.1 names its operation in SOAPAction, so any document it
 * cannot read is an empty 400; SOAP 1.2 is routed by its body, so a document that fails before the
 * operation element is a Receiver fault naming the reader's reason, and one that fails inside it an
 * empty 400 (docs/protocol.md §4.1). In the HTTP forms the same text is only a value.
 */
function documentCase(
  world: World,
  op: OperationSpec,
  form: Form,
  category: Category,
  label: string,
  attack: { prolog?: string; inParam?: string; asValue: string; failsBeforeOperation: boolean; reason?: string },
): HostileCase {
  const param = carrier(op);
  const base = baseTexts(world, op);
  if (!isSoap(form)) {
    const texts = signed(world, op, withValue(op, base, param.name, attack.asValue));
    return { category, label, request: request(op, form, texts), expected: answerTo(world, op, form, param, attack.asValue) };
  }
  const version = form === 'soap11' ? '1.1' : '1.2';
  const texts = signed(world, op, attack.inParam === undefined ? base : withValue(op, base, param.name, attack.inParam));
  const body = envelope(version, operationElement(op, texts, new Set(attack.inParam === undefined ? [] : [param.name])), attack.prolog);
  const expected: Expected =
    form === 'soap12' && attack.failsBeforeOperation ? { kind: 'fault', code: 'Server', text: attack.reason ?? 'DTD is prohibited in this XML document.' } : { kind: 'empty400' };
  return { category, label, request: soapRequest(op, version, body), expected };
}

const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';

function xxeCases(world: World, op: OperationSpec, form: Form, canary: string): HostileCase[] {
  const external = `<!DOCTYPE soap:Envelope [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>`;
  const remote = `<!DOCTYPE soap:Envelope [<!ENTITY xxe SYSTEM "${canary}/xxe.txt">]>`;
  const parameter = `<!DOCTYPE soap:Envelope [<!ENTITY % dtd SYSTEM "${canary}/evil.dtd"> %dtd; %send;]>`;
  const inline = `<!ENTITY xxe SYSTEM "file:///etc/passwd">&xxe;`;
  return [
    documentCase(world, op, form, 'xxe', 'external entity (file)', { prolog: XML_DECLARATION + external, inParam: '&xxe;', asValue: `${external}&xxe;`, failsBeforeOperation: true }),
    documentCase(world, op, form, 'xxe', 'external entity (http)', { prolog: XML_DECLARATION + remote, inParam: '&xxe;', asValue: `${remote}&xxe;`, failsBeforeOperation: true }),
    documentCase(world, op, form, 'xxe', 'parameter entity', { prolog: XML_DECLARATION + parameter, inParam: 'x', asValue: parameter, failsBeforeOperation: true }),
    documentCase(world, op, form, 'xxe', 'entity declared inside the body', { inParam: inline, asValue: inline, failsBeforeOperation: false }),
    documentCase(world, op, form, 'xxe', 'undeclared entity', { inParam: '&xxe;', asValue: '&xxe;', failsBeforeOperation: false }),
  ];
}

function bombCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const laughs = Array.from({ length: 10 }, (_, i) => (i === 0 ? '<!ENTITY l0 "lol">' : `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`)).join('');
  const quadratic = `<!ENTITY a "${'x'.repeat(10_000)}">`;
  return [
    documentCase(world, op, form, 'entity-bomb', 'billion laughs', { prolog: `<!DOCTYPE soap:Envelope [${laughs}]>`, inParam: '&l9;', asValue: `<!DOCTYPE x [${laughs}]>&l9;`, failsBeforeOperation: true }),
    documentCase(world, op, form, 'entity-bomb', 'quadratic blowup', { prolog: `<!DOCTYPE soap:Envelope [${quadratic}]>`, inParam: '&a;'.repeat(1000), asValue: '&a;'.repeat(100), failsBeforeOperation: true }),
  ];
}

function dtdCases(world: World, op: OperationSpec, form: Form, canary: string): HostileCase[] {
  return [
    documentCase(world, op, form, 'dtd', 'internal DTD', { prolog: `${XML_DECLARATION}<!DOCTYPE soap:Envelope>`, inParam: 'x', asValue: '<!DOCTYPE x>', failsBeforeOperation: true }),
    documentCase(world, op, form, 'dtd', 'external DTD', { prolog: `<!DOCTYPE soap:Envelope SYSTEM "${canary}/soap.dtd">`, inParam: 'x', asValue: `<!DOCTYPE x SYSTEM "${canary}/soap.dtd">`, failsBeforeOperation: true }),
    documentCase(world, op, form, 'dtd', 'DOCTYPE inside the operation', { inParam: '<!DOCTYPE x>', asValue: '<!DOCTYPE x>', failsBeforeOperation: false }),
  ];
}

function nestingCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const deep = (n: number) => '<a>'.repeat(n) + '</a>'.repeat(n);
  return [
    documentCase(world, op, form, 'deep-nesting', '10,000 levels', { inParam: deep(10_000), asValue: deep(300), failsBeforeOperation: false }),
    documentCase(world, op, form, 'deep-nesting', '100,000 elements side by side', { inParam: '<x/>'.repeat(100_000), asValue: '<x/>'.repeat(1_000), failsBeforeOperation: false }),
  ];
}

/** Bodies over the operation's limit; for HTTP GET, a request line over Node's 16 KiB (431). */
function hugeCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const limit = op.maxBodyBytes ?? MAX_BODY;
  const param = carrier(op);
  const base = baseTexts(world, op);
  const label = `${Math.round((limit + 4096) / 1024)} KiB in ${param.name}`;
  if (form === 'get') {
    const texts = signed(world, op, withValue(op, base, param.name, 'x'.repeat(20_000)));
    return [{ category: 'huge-body', label: '20 KB query string', request: request(op, form, texts), expected: { kind: 'status', status: 431 } }];
  }
  const padding = 'x'.repeat(limit + 4096);
  if (form === 'post') {
    const texts = signed(world, op, withValue(op, base, param.name, padding));
    return [{ category: 'huge-body', label, request: request(op, form, texts), expected: { kind: 'plain', text: 'Maximum request length exceeded.\n' } }];
  }
  const texts = signed(world, op, withValue(op, base, param.name, padding));
  return [{ category: 'huge-body', label, request: request(op, form, texts), expected: { kind: 'fault', code: 'Client', text: 'Maximum request length exceeded.' } }];
}

/** Octets that are not UTF-8: stray continuation bytes, a truncated sequence, an overlong '.', a surrogate. */
const BAD_OCTETS: ReadonlyArray<[string, Buffer]> = [
  ['0xFF 0xFE', Buffer.from([0xff, 0xfe])],
  ['overlong "../"', Buffer.from([0xc0, 0xae, 0xc0, 0xae, 0x2f])],
  ['encoded surrogate', Buffer.from([0xed, 0xa0, 0x80])],
];

function utf8Cases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const param = carrier(op);
  const base = signed(world, op, baseTexts(world, op));
  const marker = '\u0001MARK\u0001';
  const cases: HostileCase[] = [];
  for (const [label, octets] of BAD_OCTETS) {
    const texts = { ...base, [param.name]: marker };
    if (isSoap(form)) {
      const version = form === 'soap11' ? '1.1' : '1.2';
      const [before, after] = envelope(version, operationElement(op, texts)).split(marker);
      const body = Buffer.concat([Buffer.from(before), octets, Buffer.from(after)]);
      cases.push({ category: 'invalid-utf8', label, request: soapRequest(op, version, body), expected: { kind: 'empty400' } });
    } else {
      const [before, after] = formEncoded(op, texts).split(encodeURIComponent(marker));
      const escaped = [...octets].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
      // GET carries the octets %-escaped (a request line is ASCII); POST sends them escaped and raw.
      cases.push({ category: 'invalid-utf8', label: `${label} %-escaped`, request: formRequest(op, form, before + escaped + after), expected: { kind: 'plain', text: 'The request is not valid UTF-8.\n' } });
      if (form === 'post' && label === BAD_OCTETS[0][0]) {
        cases.push({ category: 'invalid-utf8', label: `${label} raw`, request: formRequest(op, form, Buffer.concat([Buffer.from(before), octets, Buffer.from(after)])), expected: { kind: 'plain', text: 'The request is not valid UTF-8.\n' } });
      }
    }
  }
  if (!isSoap(form)) {
    const [before, after] = formEncoded(op, { ...base, [param.name]: marker }).split(encodeURIComponent(marker));
    cases.push({ category: 'invalid-utf8', label: '%uD800 (half a surrogate pair)', request: formRequest(op, form, `${before}%uD800${after}`), expected: { kind: 'plain', text: 'The request is not valid UTF-8.\n' } });
  }
  return cases;
}

/** NUL in every parameter: SOAP cannot carry it (raw or as &#0;, an empty 400); HTTP answers 400 before the operation runs. */
function nulCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const cases = valueCases(world, op, form, 'nul', op.params.filter((p) => p.type !== 'base64Binary'), ['a\u0000b', '\u0000'], 1);
  if (isSoap(form)) {
    const version = form === 'soap11' ? '1.1' : '1.2';
    const param = carrier(op);
    const texts = signed(world, op, withValue(op, baseTexts(world, op), param.name, 'a&#0;b'));
    cases.push({ category: 'nul', label: `${param.name} holds &#0;`, request: soapRequest(op, version, envelope(version, operationElement(op, texts, new Set([param.name])))), expected: { kind: 'empty400' } });
  }
  return cases;
}

/** Names Windows reserves, dots and spaces at the ends, overlong names: names.ts decides each one. */
export const NAME_VALUES: readonly string[] = [
  'CON',
  'nul',
  'COM1',
  'LPT1.txt',
  'aux.tar.gz',
  'PRN.',
  '.',
  '..',
  '...',
  'name.',
  'name..',
  'name ',
  ' name',
  'name. ',
  '\u3000name',
  '.hidden',
  'a'.repeat(MAX_NAME),
  'a'.repeat(MAX_NAME + 1),
  '😀'.repeat(MAX_NAME),
  '😀'.repeat(MAX_NAME + 1),
  'e\u0301'.repeat(MAX_NAME),
  'x'.repeat(10_000),
  'evil\u202Etxt.exe',
  '\u2066evil\u2069.txt',
  'lrm\u200E.txt',
  'alm\u061C.txt',
  'non\uFFFEchar',
  'non\uFDD0char',
  'non\u{10FFFF}char',
  'line\u2028separator',
  '\u200B',
  '\u200B\u200C\u200D',
  '\u2800',
  ' \u200B ',
  'a\u200Bb',
  '👩\u200D💻',
  'tab\there',
  'line\nbreak',
  'del\u007f',
  '',
];

const TRAVERSAL_VALUES: readonly string[] = ['../../etc/passwd', '..\\..\\windows\\win.ini', '/etc/passwd', 'C:\\boot.ini', 'a/../../b', '%2e%2e%2f%2e%2e%2f', '....//....//'];

const SQL_VALUES: readonly string[] = [
  "' OR '1'='1",
  "1; DROP TABLE files; --",
  "1) OR (1=1",
  "x' UNION SELECT password_hash FROM accounts --",
  '%',
  '_',
  "\\'; --",
];

function nameCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  // Values a GET request line cannot hold (over 16 KiB) are sent in the other forms only.
  const values = form === 'get' ? NAME_VALUES.filter((v) => encodeURIComponent(v).length < 12_000) : NAME_VALUES;
  const params = valueParams(op).filter((p) => p.type === 'string' && /name$/i.test(p.name));
  return valueCases(world, op, form, 'names', params, values);
}

const stringParams = (op: OperationSpec) => op.params.filter((p) => p.type === 'string' && p.name !== 'token' && p.name !== 'sign');

function traversalCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  return valueCases(world, op, form, 'traversal', stringParams(op), TRAVERSAL_VALUES, 2);
}

function sqlCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const numbers = op.params.filter((p) => p.type === 'long' || p.type === 'int');
  return [
    ...valueCases(world, op, form, 'sql', stringParams(op), SQL_VALUES, 3),
    ...valueCases(world, op, form, 'sql', numbers, ['1 OR 1=1', '1; DROP TABLE files'], 1),
  ];
}

const range = (n: number, from = 1) => Array.from({ length: n }, (_, i) => String(from + i));

/** Id lists: 100,000 ids (a GET request line cannot hold them: 431), 1,001 distinct ids, malformed entries. */
function idListCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const lists = valueParams(op).filter((p) => p.name === 'dirids' || p.name === 'fids');
  const cases: HostileCase[] = [];
  for (const param of lists) {
    const hundredThousand = range(100_000).join(',');
    if (form === 'get') {
      const texts = signed(world, op, withValue(op, baseTexts(world, op), param.name, hundredThousand));
      cases.push({ category: 'id-lists', label: `${param.name}: 100,000 ids`, request: request(op, form, texts), expected: { kind: 'status', status: 431 } });
    } else {
      cases.push(...valueCases(world, op, form, 'id-lists', [param], [hundredThousand]).map((c) => ({ ...c, label: `${param.name}: 100,000 ids`, expected: forOperation(refused('400'), op) })));
    }
    const over = valueCases(world, op, form, 'id-lists', [param], [range(1_001, MISSING_ID).join(',')]);
    cases.push(...over.map((c) => ({ ...c, label: `${param.name}: 1,001 distinct ids`, expected: forOperation(refused('400'), op) })));
    // 0 names no item: the list passes the limit (one distinct id) and is refused as not found.
    const repeated = valueCases(world, op, form, 'id-lists', [param], [Array(2_000).fill('0').join(',')]);
    // An anonymous caller that the corpus has shown many wrong share codes is throttled before the lookup (429).
    const notFound = op.auth === 'none' ? refused('404', '429') : refused('404');
    cases.push(...repeated.map((c) => ({ ...c, label: `${param.name}: one id 2,000 times`, expected: forOperation(notFound, op) })));
    for (const bad of ['-1', '+1', '1e3', '١٢', `${MISSING_ID};1`]) {
      cases.push(...valueCases(world, op, form, 'id-lists', [param], [bad]).map((c) => ({ ...c, expected: forOperation(refused('400'), op) })));
    }
  }
  return cases;
}

const NUMBER_VALUES: readonly string[] = [
  '-1',
  '-9223372036854775808',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '99999999999999999999999999',
  '2147483648',
  '-2147483649',
  '1e3',
  '0x10',
  '1.5',
  '',
  ` +${MISSING_ID} `,
  '٣',
];

/** Every number parameter gets six of the values in turn; uid, which every signed call has, three. */
function numberCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const numbers = op.params.filter((p) => p.type === 'long' || p.type === 'int');
  return [
    ...valueCases(world, op, form, 'numbers', numbers.filter((p) => p.name !== 'uid'), NUMBER_VALUES, 6),
    ...valueCases(world, op, form, 'numbers', numbers.filter((p) => p.name === 'uid'), NUMBER_VALUES, 3),
  ];
}

/** byte[] that is not base64 (SOAP: an empty 400) or not bytes (HTTP: "Cannot convert … to System.Byte."). */
function base64Cases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const params = op.params.filter((p) => p.type === 'base64Binary');
  const cases: HostileCase[] = [];
  for (const param of params) {
    for (const value of ['!!!!', 'a', 'abc=d', '====', 'YWJj=ZGVm', '256', '-1', '0x89', '1,2,3']) {
      const texts = signed(world, op, withValue(op, baseTexts(world, op), param.name, value));
      let expected: Expected;
      if (isSoap(form)) {
        expected = decodeBase64(value) === null ? { kind: 'empty400' } : inertAnswer(op);
      } else {
        let converts = true;
        try {
          decodeByteArray([value]);
        } catch {
          converts = false;
        }
        expected = converts ? inertAnswer(op) : { kind: 'plain', text: /^Cannot convert .* to System\.Byte\.\nParameter name: type ---> / };
      }
      cases.push({ category: 'base64', label: `${param.name}=${value}`, request: request(op, form, texts), expected });
    }
  }
  return cases;
}

/** Content types that do not match the form. */
function contentTypeCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const texts = signed(world, op, baseTexts(world, op));
  const soapPath = `/${op.service}.asmx`;
  const cases: HostileCase[] = [];
  if (isSoap(form)) {
    const version = form === 'soap11' ? '1.1' : '1.2';
    const body = Buffer.from(envelope(version, operationElement(op, texts)));
    const post = (headers: Record<string, string>): RawRequest => ({ method: 'POST', path: soapPath, headers, body });
    const action: Record<string, string> = version === '1.1' ? { SOAPAction: `"${NAMESPACE}${op.name}"` } : {};
    cases.push(
      { category: 'content-type', label: 'no Content-Type', request: post({ ...action }), expected: { kind: 'status', status: 415 } },
      { category: 'content-type', label: 'application/json', request: post({ ...action, 'Content-Type': 'application/json' }), expected: { kind: 'html', status: 500, text: 'Request format is unrecognized.' } },
      { category: 'content-type', label: 'multipart/form-data', request: post({ ...action, 'Content-Type': 'multipart/form-data; boundary=x' }), expected: { kind: 'html', status: 500, text: 'Request format is unrecognized.' } },
      { category: 'content-type', label: 'an unknown charset', request: post({ ...action, 'Content-Type': `${version === '1.1' ? 'text/xml' : 'application/soap+xml'}; charset=klingon` }), expected: { kind: 'empty400' } },
    );
    if (version === '1.2') {
      // ASMX takes a form posted to the service path for a SOAP 1.2 request it cannot read.
      const expected: Expected = { kind: 'fault', code: 'Server', text: 'Data at the root level is invalid. Line 1, position 1.' };
      cases.push({ category: 'content-type', label: 'application/x-www-form-urlencoded', request: post({ 'Content-Type': 'application/x-www-form-urlencoded' }), expected });
    } else {
      cases.push({ category: 'content-type', label: 'a SOAP 1.1 envelope as application/soap+xml', request: post({ 'Content-Type': 'application/soap+xml; charset=utf-8' }), expected: { kind: 'status', status: 415 } });
    }
    return cases;
  }
  const query = formEncoded(op, texts);
  if (form === 'get') {
    // A GET reads its query string only: a body and its content type change nothing.
    const request: RawRequest = { method: 'GET', path: `${soapPath}/${op.name}?${query}`, headers: { 'Content-Type': 'application/json' }, body: Buffer.from('{"uid":1}') };
    return [{ category: 'content-type', label: 'a JSON body on a GET', request, expected: inertAnswer(op) }];
  }
  for (const type of ['application/json', 'multipart/form-data; boundary=x', 'text/xml; charset=utf-8', 'text/plain']) {
    cases.push({ category: 'content-type', label: type, request: formRequest(op, 'post', query, type), expected: { kind: 'plain', text: `Request format is invalid: ${type}.\n` } });
  }
  const none: RawRequest = { method: 'POST', path: `${soapPath}/${op.name}`, headers: {}, body: Buffer.from(query) };
  cases.push({ category: 'content-type', label: 'no Content-Type', request: none, expected: { kind: 'plain', text: 'Request format is invalid: .\n' } });
  return cases;
}

/**
 * Each parameter left out in turn. SOAP binds the default (0, null), so the call is judged as such
 * (uid 0 or no token: 401; no sign: 403); HTTP GET/POST require every parameter.
 */
function missingCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const base = baseTexts(world, op);
  return op.params.map((param) => {
    const texts = param.name === 'sign' ? { ...signed(world, op, base), sign: undefined } : signed(world, op, withValue(op, base, param.name, undefined));
    let expected: Expected;
    if (!isSoap(form)) expected = { kind: 'plain', text: `Missing parameter: ${param.name}.\n` };
    else if (param.type === 'long' || param.type === 'int') expected = answerTo(world, op, form, param, '0');
    else if (param.name === 'sign' || param.name === 'token' || param.name === 'uid') expected = forOperation(refused(param.name === 'sign' ? '403' : '401'), op);
    else if (param.name === 'name' || param.name === 'newname') expected = refused('400');
    else expected = inertAnswer(op);
    return { category: 'missing-param' as const, label: `without ${param.name}`, request: request(op, form, texts), expected };
  });
}

/**
 * Each parameter sent twice, the second time with another value. SOAP takes the first (the inert
 * call); HTTP joins them with ',' (the sign covers the joined text, as the server reads it).
 */
function duplicateCases(world: World, op: OperationSpec, form: Form): HostileCase[] {
  const base = baseTexts(world, op);
  const cases: HostileCase[] = [];
  for (const param of op.params) {
    const second = param.type === 'long' || param.type === 'int' ? '1' : param.type === 'base64Binary' ? '137' : 'second';
    const first = param.name === 'sign' ? signed(world, op, base).sign! : base[param.name]!;
    if (isSoap(form)) {
      const version = form === 'soap11' ? '1.1' : '1.2';
      const texts = signed(world, op, base);
      const body = envelope(version, operationElement(op, texts, new Set(), `<${param.name}>${second}</${param.name}>`));
      cases.push({ category: 'duplicate-param', label: `${param.name} twice`, request: soapRequest(op, version, body), expected: inertAnswer(op) });
      continue;
    }
    const joined = `${first},${second}`;
    const texts = param.name === 'sign' ? signed(world, op, base) : signed(world, op, withValue(op, base, param.name, joined));
    const query = formEncoded(op, { ...texts, [param.name]: first }) + `&${param.name}=${encodeURIComponent(second)}`;
    let expected: Expected;
    if (param.type === 'base64Binary') expected = { kind: 'plain', text: /^Cannot convert .* to System\.Byte\./ };
    else expected = answerTo(world, op, form, param, joined);
    cases.push({ category: 'duplicate-param', label: `${param.name} twice`, request: formRequest(op, form, query), expected });
  }
  return cases;
}

const GENERATORS: Record<Category, (world: World, op: OperationSpec, form: Form, canary: string) => HostileCase[]> = {
  xxe: xxeCases,
  'entity-bomb': bombCases,
  dtd: dtdCases,
  'deep-nesting': nestingCases,
  'huge-body': hugeCases,
  'invalid-utf8': utf8Cases,
  nul: nulCases,
  names: nameCases,
  traversal: traversalCases,
  sql: sqlCases,
  'id-lists': idListCases,
  numbers: numberCases,
  base64: base64Cases,
  'content-type': contentTypeCases,
  'missing-param': missingCases,
  'duplicate-param': duplicateCases,
};

/** The hostile cases of one category for one operation in one form. `canary` is a loopback URL that must never be fetched. */
export function hostileCases(category: Category, world: World, op: OperationSpec, form: Form, canary: string): HostileCase[] {
  return GENERATORS[category](world, op, form, canary);
}
