/** The SOAP 1.1 and 1.2 forms: POST /X.asmx with an envelope, as ASMX-WIRE.md describes them. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { operationsOf, type OperationSpec, type ServiceName } from '../../catalog/operations';
import { bindParameterTexts, bindSoapParameters, SoapBase64Error, SoapValueError, type BoundCall } from './binding';
import { bindCommonParameters, readCommonEnvelope } from './common-envelope';
import {
  ENVELOPE_END,
  envelopeStart,
  messages,
  processFailure,
  readFailure,
  renderSoapFault,
  SOAP11_NS,
  SOAP12_NS,
  SOAP_CONTENT_TYPE,
  type SoapFault,
  type SoapVersion,
} from './faults';
import { answer, BINDING_CACHE, OPERATION_CACHE, type ContentType, type RequestFacts } from '../http-common';
import type { ProtocolEnv } from '../pipeline';
import { answerXmlDocument } from './rendered-answers';
import { resultString, writeResultElement } from './results';
import { readXml, XmlReadError, type XmlElement } from './xml-reader';
import { soapAction } from './wsdl';
import { escapeAttribute, escapeText } from './xml-writer';

/** The SOAP version a request's content type asks for, or null when it is not a SOAP content type. */
export function soapVersionOf(contentType: ContentType): SoapVersion | null {
  if (contentType.mediaType === 'text/xml') return '1.1';
  if (contentType.mediaType === 'application/soap+xml') return '1.2';
  return null;
}

/** The action a request names before its body is read: SOAPAction (1.1) or the action= parameter (1.2). */
export function declaredAction(req: IncomingMessage, version: SoapVersion, contentType: ContentType): string | undefined {
  if (version === '1.2') return contentType.params.get('action');
  const header = req.headers.soapaction;
  if (typeof header !== 'string') return undefined;
  const trimmed = header.trim();
  return trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
}

/** The operation a SOAPAction names: `{namespace}{Operation}`, or `{namespace}/{Operation}` as .NET proxies send it. */
export function operationForAction(service: ServiceName, namespace: string, action: string): OperationSpec | undefined {
  return actionsOf(service, namespace).get(action);
}

/** Each service's operations by the actions that name them, for the namespace they were built for: built once, not per call. */
const actionTables = new Map<ServiceName, { readonly namespace: string; readonly byAction: ReadonlyMap<string, OperationSpec> }>();

function actionsOf(service: ServiceName, namespace: string): ReadonlyMap<string, OperationSpec> {
  // Looked up by service, then compared: one namespace per process (a test may build another).
  const table = actionTables.get(service);
  if (table && table.namespace === namespace) return table.byAction;
  const byAction = new Map<string, OperationSpec>();
  // In catalog order, first come first kept: the operation a linear search would find first.
  for (const op of operationsOf(service)) {
    const actions = [soapAction(namespace, op), ...(namespace.endsWith('/') ? [] : [`${namespace}/${op.name}`])];
    for (const action of actions) if (!byAction.has(action)) byAction.set(action, op);
  }
  actionTables.set(service, { namespace, byAction });
  return byAction;
}

/** The largest body any operation of a service accepts: the limit while the operation is unknown. */
export function largestBodyLimit(service: ServiceName, defaultLimit: number): number {
  return Math.max(defaultLimit, ...operationsOf(service).map((op) => op.maxBodyBytes ?? defaultLimit));
}

class EncodingFailure extends Error {}

/** The request text: BOM, then Content-Type charset, then XML declaration, else UTF-8 (ASMX: ASCII; we differ on purpose). Invalid bytes are refused, never replaced. */
export function decodeRequestText(body: Buffer, contentType: ContentType): string {
  let label = 'utf-8';
  let start = 0;
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) start = 3;
  else if (body[0] === 0xff && body[1] === 0xfe) [label, start] = ['utf-16le', 2];
  else if (body[0] === 0xfe && body[1] === 0xff) [label, start] = ['utf-16be', 2];
  else {
    // The declaration is looked at only when the Content-Type names no charset.
    label = contentType.params.get('charset') ?? declaredEncoding(body) ?? 'utf-8';
  }
  return decodeStrictly(label, body.subarray(start));
}

/** The encoding an XML declaration at the start of `body` names, if any. */
function declaredEncoding(body: Buffer): string | undefined {
  return /^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(body.subarray(0, 200).toString('latin1'))?.[1];
}

/** A fatal decoder made per request: keeping one per label gained nothing measurable (docs/design.md, "Caches"). */
function decodeStrictly(label: string, bytes: Uint8Array): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label, { fatal: true, ignoreBOM: true });
  } catch {
    throw new EncodingFailure(`unsupported charset ${label}`);
  }
  try {
    return decoder.decode(bytes);
  } catch {
    throw new EncodingFailure(`the request is not valid ${label}`);
  }
}

function firstChild(element: XmlElement | null | undefined, ns: string, local: string): XmlElement | undefined {
  return element?.children.find((c) => c.ns === ns && c.local === local);
}

function mustUnderstandHeader(envelope: XmlElement): XmlElement | undefined {
  const header = firstChild(envelope, envelope.ns, 'Header');
  return header?.children.find((entry) =>
    entry.attributes.some((a) => a.ns === envelope.ns && a.local === 'mustUnderstand' && (a.value === '1' || a.value === 'true')),
  );
}

/** What a SOAP request was read to. */
interface SoapReading {
  readonly op: OperationSpec;
  /** The SOAP version of its envelope, which the answer is in. */
  readonly answerVersion: SoapVersion;
  readonly call: BoundCall;
}

/** Answers a SOAP request whose body was read; `action` and `routedOp` were looked up first, for the body's size limit. */
export async function answerSoap(
  res: ServerResponse,
  service: ServiceName,
  version: SoapVersion,
  contentType: ContentType,
  action: string | undefined,
  routedOp: OperationSpec | undefined,
  body: Buffer,
  facts: RequestFacts,
  env: ProtocolEnv,
): Promise<void> {
  const { namespace } = env.config;
  const fault = (answerVersion: SoapVersion, soapFault: SoapFault, cacheControl = BINDING_CACHE) =>
    answer(res, { status: 500, contentType: SOAP_CONTENT_TYPE[answerVersion], cacheControl }, renderSoapFault(answerVersion, soapFault));

  // Routing by header happens before the body is read.
  if (action !== undefined && !routedOp) {
    return fault(version, {
      code: 'Client',
      message: version === '1.1' ? messages.unknownSoapAction(action) : messages.unknownSoap12Action(action),
    });
  }

  let text: string;
  try {
    text = decodeRequestText(body, contentType);
  } catch (error) {
    if (error instanceof EncodingFailure) return answer(res, { status: 400, contentType: SOAP_CONTENT_TYPE[version], cacheControl: BINDING_CACHE });
    throw error;
  }

  const reading = readSoapCall(res, service, version, action, routedOp, body, text, env);
  if (!reading) return;
  const { op, answerVersion, call } = reading;

  const outcome = await env.invoke(call, facts);
  if (outcome.kind === 'incident') {
    return fault(answerVersion, processFailure(messages.internalError(outcome.incident)), OPERATION_CACHE);
  }
  const operation = op;
  await answerXmlDocument(
    res,
    env.caches,
    outcome,
    `soap ${answerVersion} ${operation.name} ${namespace}`,
    { status: 200, contentType: SOAP_CONTENT_TYPE[answerVersion], cacheControl: OPERATION_CACHE },
    { indent: false, emptyNamespaceOnTop: true },
    async (writer) => {
      writer.raw(`${envelopeStart(answerVersion)}<soap:Body><${operation.name}Response xmlns="${escapeAttribute(namespace)}">`);
      if (operation.result === 'string') {
        writer.raw(`<${operation.name}Result>${escapeText(resultString(outcome))}</${operation.name}Result>`);
      } else {
        writer.raw(`<${operation.name}Result>`);
        await writeResultElement(writer, operation, outcome);
        writer.raw(`</${operation.name}Result>`);
      }
      writer.raw(`</${operation.name}Response>${ENVELOPE_END}`);
    },
  );
}

/**
 * What a SOAP request calls: envelope, version against the content type, operation, bound parameters. Undefined
 * when refused, the refusal already answered (a fault, 400 or 415, as ASMX-WIRE.md says).
 */
function readSoapCall(
  res: ServerResponse,
  service: ServiceName,
  version: SoapVersion,
  action: string | undefined,
  routedOp: OperationSpec | undefined,
  body: Buffer,
  text: string,
  env: ProtocolEnv,
): SoapReading | undefined {
  const { namespace } = env.config;
  const fault = (answerVersion: SoapVersion, soapFault: SoapFault, cacheControl = BINDING_CACHE) =>
    answer(res, { status: 500, contentType: SOAP_CONTENT_TYPE[answerVersion], cacheControl }, renderSoapFault(answerVersion, soapFault));
  const badRequest = () => answer(res, { status: 400, contentType: SOAP_CONTENT_TYPE[version], cacheControl: BINDING_CACHE });

  let op = routedOp;
  // The envelope clients send is read directly (common-envelope.ts); any other by the general reader.
  const limits = { maxDepth: env.config.limits.maxXmlDepth, maxElements: env.config.limits.maxXmlElements };
  const common = readCommonEnvelope(text, limits);
  let tree: XmlElement | undefined;
  if (!common) {
    try {
      tree = readXml(text, limits);
    } catch (error) {
      if (!(error instanceof XmlReadError)) throw error;
      // Routed by header, ASMX answers 400; routed by body, failing before the operation element is a fault.
      const partialBody = firstChild(error.partialRoot, error.partialRoot?.ns ?? '', 'Body');
      if (action !== undefined || (partialBody && partialBody.children.length > 0)) return void badRequest();
      return void fault(version, processFailure(error.message));
    }
  }
  const envelope = common ?? tree!;

  if (envelope.local !== 'Envelope' || (envelope.ns !== SOAP11_NS && envelope.ns !== SOAP12_NS)) {
    const expected = version === '1.1' ? SOAP11_NS : SOAP12_NS;
    return void fault(version, { code: 'VersionMismatch', message: messages.versionMismatch(envelope.ns, expected) });
  }
  const envelopeVersion: SoapVersion = envelope.ns === SOAP11_NS ? '1.1' : '1.2';
  // A SOAP 1.1 envelope sent as application/soap+xml is refused; the other way round is answered in 1.2.
  if (version === '1.2' && envelopeVersion === '1.1') {
    return void answer(res, { status: 415, contentType: SOAP_CONTENT_TYPE['1.1'], cacheControl: BINDING_CACHE });
  }
  const answerVersion = envelopeVersion;

  const requestElement = common ? common.request : firstChild(tree, envelope.ns, 'Body')?.children[0];
  const named = requestElement && requestElement.ns === namespace ? operationsOf(service).find((o) => o.name === requestElement.local) : undefined;
  if (!op) {
    op = named;
    if (!op) {
      return void fault(answerVersion, {
        code: 'Client',
        message: version === '1.1' ? messages.unknownSoapAction(action ?? '') : messages.noSoap12Action,
      });
    }
  } else if (version === '1.1' && named && named !== op) {
    // ASMX silently runs the SOAPAction's operation with default parameters; we refuse (ASMX-WIRE.md).
    return void fault(answerVersion, { code: 'Client', message: messages.actionBodyMismatch(op.name, named.name) });
  }

  const notUnderstood = tree && mustUnderstandHeader(tree);
  if (notUnderstood) {
    return void fault(answerVersion, { code: 'MustUnderstand', message: messages.headerNotUnderstood(notUnderstood.local) }, OPERATION_CACHE);
  }

  // Routed by its body, the request was read under the service's largest limit: hold it to its own.
  if (body.length > (op.maxBodyBytes ?? env.config.limits.maxBodyBytes)) {
    return void fault(answerVersion, { code: 'Client', message: `Server was unable to read request. ---> ${messages.requestTooLarge}` });
  }

  let call: BoundCall | undefined = common && (named === op ? bindCommonParameters(op, common, namespace) : bindParameterTexts(op, () => undefined));
  try {
    if (!call) {
      // The general reader's tree: any other envelope, or a value the common path would not convert.
      tree ??= readXml(text, limits);
      call = bindSoapParameters(op, named === op ? firstChild(tree, tree.ns, 'Body')!.children[0] : null, namespace, text);
    }
  } catch (error) {
    if (error instanceof SoapValueError) return void fault(answerVersion, readFailure(error.line, error.position, error.inner));
    if (error instanceof SoapBase64Error) return void badRequest();
    throw error;
  }

  return { op, answerVersion, call };
}
