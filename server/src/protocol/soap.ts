/**
 * The SOAP 1.1 and SOAP 1.2 forms: POST /X.asmx with an envelope. Routing, envelope checks,
 * parameter reading and the answer envelope, as ASMX-WIRE.md describes them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { operationsOf, type OperationSpec, type ServiceName } from '../catalog/operations';
import { bindSoapParameters, SoapBase64Error, SoapValueError, type BoundCall } from './binding';
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
import { answer, answerXmlStream, BINDING_CACHE, OPERATION_CACHE, type ContentType, type RequestFacts } from './http-common';
import type { ProtocolEnv } from './pipeline';
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

export function operationForAction(service: ServiceName, namespace: string, action: string): OperationSpec | undefined {
  return operationsOf(service).find((op) => soapAction(namespace, op) === action);
}

class EncodingFailure extends Error {}

/**
 * The request text. A byte-order mark decides first, then the Content-Type charset, then the XML
 * declaration; with none of them it is UTF-8 (ASMX would read ASCII: we differ on purpose). Bytes
 * that are not valid in that encoding are refused, never replaced.
 */
export function decodeRequestText(body: Buffer, contentType: ContentType): string {
  let label = 'utf-8';
  let start = 0;
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) start = 3;
  else if (body[0] === 0xff && body[1] === 0xfe) [label, start] = ['utf-16le', 2];
  else if (body[0] === 0xfe && body[1] === 0xff) [label, start] = ['utf-16be', 2];
  else {
    const declared = /^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(body.subarray(0, 200).toString('latin1'));
    label = contentType.params.get('charset') ?? declared?.[1] ?? 'utf-8';
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label, { fatal: true, ignoreBOM: true });
  } catch {
    throw new EncodingFailure(`unsupported charset ${label}`);
  }
  try {
    return decoder.decode(body.subarray(start));
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

export async function answerSoap(
  req: IncomingMessage,
  res: ServerResponse,
  service: ServiceName,
  version: SoapVersion,
  contentType: ContentType,
  body: Buffer,
  facts: RequestFacts,
  env: ProtocolEnv,
): Promise<void> {
  const { namespace } = env.config;
  const fault = (answerVersion: SoapVersion, soapFault: SoapFault, cacheControl = BINDING_CACHE) =>
    answer(res, { status: 500, contentType: SOAP_CONTENT_TYPE[answerVersion], cacheControl }, renderSoapFault(answerVersion, soapFault));
  const badRequest = () => answer(res, { status: 400, contentType: SOAP_CONTENT_TYPE[version], cacheControl: BINDING_CACHE });

  // Routing by header happens before the body is read.
  const action = declaredAction(req, version, contentType);
  let op: OperationSpec | undefined;
  if (action !== undefined) {
    op = operationForAction(service, namespace, action);
    if (!op) {
      return fault(version, {
        code: 'Client',
        message: version === '1.1' ? messages.unknownSoapAction(action) : messages.unknownSoap12Action(action),
      });
    }
  }

  let text: string;
  try {
    text = decodeRequestText(body, contentType);
  } catch (error) {
    if (error instanceof EncodingFailure) return badRequest();
    throw error;
  }

  let envelope: XmlElement;
  try {
    envelope = readXml(text, { maxDepth: env.config.limits.maxXmlDepth, maxElements: env.config.limits.maxXmlElements });
  } catch (error) {
    if (!(error instanceof XmlReadError)) throw error;
    // Routed by header: the body was read to bind parameters, and ASMX answers 400. Routing by
    // body reads the document up to the operation element first: failing before it is a fault.
    const partialBody = firstChild(error.partialRoot, error.partialRoot?.ns ?? '', 'Body');
    if (action !== undefined || (partialBody && partialBody.children.length > 0)) return badRequest();
    return fault(version, processFailure(error.message));
  }

  if (envelope.local !== 'Envelope' || (envelope.ns !== SOAP11_NS && envelope.ns !== SOAP12_NS)) {
    const expected = version === '1.1' ? SOAP11_NS : SOAP12_NS;
    return fault(version, { code: 'VersionMismatch', message: messages.versionMismatch(envelope.ns, expected) });
  }
  const envelopeVersion: SoapVersion = envelope.ns === SOAP11_NS ? '1.1' : '1.2';
  // A SOAP 1.1 envelope sent as application/soap+xml is refused; the other way round is answered in 1.2.
  if (version === '1.2' && envelopeVersion === '1.1') {
    return answer(res, { status: 415, contentType: SOAP_CONTENT_TYPE['1.1'], cacheControl: BINDING_CACHE });
  }
  const answerVersion = envelopeVersion;

  const bodyElement = firstChild(envelope, envelope.ns, 'Body');
  const requestElement = bodyElement?.children[0];
  const named = requestElement && requestElement.ns === namespace ? operationsOf(service).find((o) => o.name === requestElement.local) : undefined;
  if (!op) {
    op = named;
    if (!op) {
      return fault(answerVersion, {
        code: 'Client',
        message: version === '1.1' ? messages.unknownSoapAction(action ?? '') : messages.noSoap12Action,
      });
    }
  } else if (version === '1.1' && named && named !== op) {
    // ASMX silently runs the SOAPAction's operation with default parameters; we refuse (ASMX-WIRE.md).
    return fault(answerVersion, { code: 'Client', message: messages.actionBodyMismatch(op.name, named.name) });
  }

  const notUnderstood = mustUnderstandHeader(envelope);
  if (notUnderstood) {
    return fault(answerVersion, { code: 'MustUnderstand', message: messages.headerNotUnderstood(notUnderstood.local) }, OPERATION_CACHE);
  }

  let call: BoundCall;
  try {
    call = bindSoapParameters(op, named === op ? requestElement! : null, namespace, text);
  } catch (error) {
    if (error instanceof SoapValueError) return fault(answerVersion, readFailure(error.line, error.position, error.inner));
    if (error instanceof SoapBase64Error) return badRequest();
    throw error;
  }

  const outcome = await env.invoke(call, facts);
  if (outcome.kind === 'incident') {
    return fault(answerVersion, processFailure(messages.internalError(outcome.incident)), OPERATION_CACHE);
  }
  const operation = op;
  await answerXmlStream(
    res,
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
