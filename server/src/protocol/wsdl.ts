/**
 * The WSDL 1.1 document of a service (GET /X.asmx?WSDL), generated from the operation catalog in the
 * shape ASP.NET ASMX writes it (asmx-captures/01-docs/*-wsdl.res): one document with SOAP 1.1,
 * SOAP 1.2, HTTP GET and HTTP POST bindings, document/literal, the same prefixes and layout.
 *
 * One deliberate difference: ASMX types byte[] in HTTP GET/POST as `s1:StringArray`, a restriction
 * of soapenc:Array. Any reference to the SOAP-encoding namespace makes zeep download that schema
 * from schemas.xmlsoap.org (its visitor auto-imports the namespace in every schema that names it,
 * whatever is inline), and the only import zeep would accept instead, a same-document
 * schemaLocation="#", breaks node `soap` and zeep when they read the WSDL from a file. So StringArray
 * here is the same sequence of String elements without the soapenc base, and the WSDL needs nothing
 * but itself. The cost: a .NET HttpGet/HttpPost proxy generated from it takes `string` rather than
 * `string[]` for byteFileStream, which the binding accepts as one base64 value.
 */
import { operationsOf, serviceDocs, type OperationSpec, type ParamSpec, type ServiceName } from '../catalog/operations';
import { StringSink, XmlWriter, type Attributes } from './xml-writer';

export interface DocOptions {
  /** The service namespace, {namespace} of the interface, e.g. http://tempuri.org/. */
  readonly namespace: string;
  /** Absolute URL of the .asmx, e.g. http://127.0.0.1:8080/FileService.asmx. */
  readonly location: string;
}

const NS = {
  soapenc: 'http://schemas.xmlsoap.org/soap/encoding/',
  soap12: 'http://schemas.xmlsoap.org/wsdl/soap12/',
  http: 'http://schemas.xmlsoap.org/wsdl/http/',
  mime: 'http://schemas.xmlsoap.org/wsdl/mime/',
  tm: 'http://microsoft.com/wsdl/mime/textMatching/',
  s: 'http://www.w3.org/2001/XMLSchema',
  soap: 'http://schemas.xmlsoap.org/wsdl/soap/',
  wsdl: 'http://schemas.xmlsoap.org/wsdl/',
} as const;

const SOAP_HTTP_TRANSPORT = 'http://schemas.xmlsoap.org/soap/http';

/** Where ASMX puts the types of HTTP GET/POST array parameters (HttpProtocolReflector). */
export function abstractTypesNamespace(namespace: string): string {
  return namespace.endsWith('/') ? `${namespace}AbstractTypes` : `${namespace}/AbstractTypes`;
}

/**
 * The SOAPAction of an operation: "{namespace}{Operation}" (DECISIONS.md §1), as the binder expects
 * it. (ASMX itself inserts a '/' when the namespace does not end with one.)
 */
export function soapAction(namespace: string, op: Pick<OperationSpec, 'name'>): string {
  return `${namespace}${op.name}`;
}

const takesBytes = (op: OperationSpec) => op.params.some((param) => param.type === 'base64Binary');
const returnsString = (op: OperationSpec) => op.result === 'string';

/** The text of wsdl:documentation: the catalog's doc, with extensions marked as on the help pages. */
function operationDocumentation(op: OperationSpec): string {
  return op.extension ? `${op.doc} (extension)` : op.doc;
}

export function renderWsdl(service: ServiceName, opts: DocOptions): string {
  const ops = operationsOf(service);
  const sink = new StringSink();
  const w = new XmlWriter(sink, { indent: true, emptyNamespaceOnTop: false });
  w.raw('<?xml version="1.0" encoding="utf-8"?>\n');
  w.start('wsdl:definitions', rootAttributes(opts.namespace, ops.some(takesBytes)));
  writeTypes(w, ops, opts.namespace);
  writeMessages(w, ops);
  writePortTypes(w, service, ops);
  writeBindings(w, service, ops, opts.namespace);
  writeService(w, service, opts.location);
  w.end();
  void w.flush();
  return sink.toString();
}

/** The prefixes in ASMX's order; s1 only where a byte[] parameter needs the abstract types. */
function rootAttributes(namespace: string, needsAbstractTypes: boolean): Attributes {
  return [
    ['xmlns:soapenc', NS.soapenc],
    ['xmlns:soap12', NS.soap12],
    ['xmlns:s1', needsAbstractTypes ? abstractTypesNamespace(namespace) : undefined],
    ['xmlns:http', NS.http],
    ['xmlns:tns', namespace],
    ['xmlns:mime', NS.mime],
    ['xmlns:tm', NS.tm],
    ['xmlns:s', NS.s],
    ['xmlns:soap', NS.soap],
    ['targetNamespace', namespace],
    ['xmlns:wsdl', NS.wsdl],
  ];
}

function writeDocumentation(w: XmlWriter, text: string): void {
  // .NET repeats the wsdl namespace on its documentation elements; proxies copy the text as doc comments.
  w.textElement('wsdl:documentation', [['xmlns:wsdl', NS.wsdl]], text);
}

// ---- types --------------------------------------------------------------------------------------

function writeTypes(w: XmlWriter, ops: readonly OperationSpec[], namespace: string): void {
  w.start('wsdl:types');
  w.start('s:schema', [['elementFormDefault', 'qualified'], ['targetNamespace', namespace]]);
  for (const op of ops) {
    writeRequestElement(w, op);
    writeResponseElement(w, op);
  }
  // The root element of a string result over HTTP GET/POST: <string xmlns="{ns}">…</string>.
  if (ops.some(returnsString)) w.empty('s:element', [['name', 'string'], ['nillable', 'true'], ['type', 's:string']]);
  w.end();
  if (ops.some(takesBytes)) writeAbstractTypes(w, namespace);
  w.end();
}

function writeRequestElement(w: XmlWriter, op: OperationSpec): void {
  w.start('s:element', [['name', op.name]]);
  w.start('s:complexType');
  if (op.params.length > 0) {
    w.start('s:sequence');
    for (const param of op.params) w.empty('s:element', parameterElementAttributes(param));
    w.end();
  }
  w.end();
  w.end();
}

/** Value types cannot be omitted (minOccurs 1); strings and byte[] can be null (minOccurs 0). */
function parameterElementAttributes(param: ParamSpec): Attributes {
  const valueType = param.type === 'long' || param.type === 'int';
  return [
    ['minOccurs', valueType ? '1' : '0'],
    ['maxOccurs', '1'],
    ['name', param.name],
    ['type', `s:${param.type}`],
  ];
}

function writeResponseElement(w: XmlWriter, op: OperationSpec): void {
  const result: Attributes = [['minOccurs', '0'], ['maxOccurs', '1'], ['name', `${op.name}Result`]];
  w.start('s:element', [['name', `${op.name}Response`]]);
  w.start('s:complexType');
  w.start('s:sequence');
  if (returnsString(op)) {
    w.empty('s:element', [...result, ['type', 's:string']]);
  } else {
    // An XmlNode result: any element, mixed content allowed.
    w.start('s:element', result);
    w.start('s:complexType', [['mixed', 'true']]);
    w.start('s:sequence');
    w.empty('s:any');
    w.end();
    w.end();
    w.end();
  }
  w.end();
  w.end();
  w.end();
}

/** StringArray without the soapenc:Array base (see the file comment for why). */
function writeAbstractTypes(w: XmlWriter, namespace: string): void {
  w.start('s:schema', [['targetNamespace', abstractTypesNamespace(namespace)]]);
  w.start('s:complexType', [['name', 'StringArray']]);
  w.start('s:sequence');
  w.empty('s:element', [['minOccurs', '0'], ['maxOccurs', 'unbounded'], ['name', 'String'], ['type', 's:string']]);
  w.end();
  w.end();
  w.end();
}

// ---- messages -----------------------------------------------------------------------------------

function writeMessages(w: XmlWriter, ops: readonly OperationSpec[]): void {
  for (const op of ops) {
    writeMessage(w, `${op.name}SoapIn`, [[['name', 'parameters'], ['element', `tns:${op.name}`]]]);
    writeMessage(w, `${op.name}SoapOut`, [[['name', 'parameters'], ['element', `tns:${op.name}Response`]]]);
  }
  for (const form of ['HttpGet', 'HttpPost'] as const) {
    for (const op of ops) {
      writeMessage(w, `${op.name}${form}In`, op.params.map(httpPartAttributes));
      writeMessage(w, `${op.name}${form}Out`, [[['name', 'Body'], ['element', returnsString(op) ? 'tns:string' : undefined]]]);
    }
  }
}

function writeMessage(w: XmlWriter, name: string, parts: readonly Attributes[]): void {
  w.start('wsdl:message', [['name', name]]);
  for (const part of parts) w.empty('wsdl:part', part);
  w.end();
}

/** Over HTTP every parameter is text; a byte[] is the parameter repeated, one value per byte. */
function httpPartAttributes(param: ParamSpec): Attributes {
  return [['name', param.name], ['type', param.type === 'base64Binary' ? 's1:StringArray' : 's:string']];
}

// ---- port types ---------------------------------------------------------------------------------

function writePortTypes(w: XmlWriter, service: ServiceName, ops: readonly OperationSpec[]): void {
  for (const form of ['Soap', 'HttpGet', 'HttpPost'] as const) {
    w.start('wsdl:portType', [['name', `${service}${form}`]]);
    for (const op of ops) {
      w.start('wsdl:operation', [['name', op.name]]);
      writeDocumentation(w, operationDocumentation(op));
      w.empty('wsdl:input', [['message', `tns:${op.name}${form}In`]]);
      w.empty('wsdl:output', [['message', `tns:${op.name}${form}Out`]]);
      w.end();
    }
    w.end();
  }
}

// ---- bindings -----------------------------------------------------------------------------------

function writeBindings(w: XmlWriter, service: ServiceName, ops: readonly OperationSpec[], namespace: string): void {
  for (const [suffix, prefix] of [['Soap', 'soap'], ['Soap12', 'soap12']] as const) {
    w.start('wsdl:binding', [['name', `${service}${suffix}`], ['type', `tns:${service}Soap`]]);
    w.empty(`${prefix}:binding`, [['transport', SOAP_HTTP_TRANSPORT]]);
    for (const op of ops) {
      w.start('wsdl:operation', [['name', op.name]]);
      w.empty(`${prefix}:operation`, [['soapAction', soapAction(namespace, op)], ['style', 'document']]);
      writeBindingMessage(w, 'wsdl:input', `${prefix}:body`, [['use', 'literal']]);
      writeBindingMessage(w, 'wsdl:output', `${prefix}:body`, [['use', 'literal']]);
      w.end();
    }
    w.end();
  }

  for (const [form, verb] of [['HttpGet', 'GET'], ['HttpPost', 'POST']] as const) {
    w.start('wsdl:binding', [['name', `${service}${form}`], ['type', `tns:${service}${form}`]]);
    w.empty('http:binding', [['verb', verb]]);
    for (const op of ops) {
      w.start('wsdl:operation', [['name', op.name]]);
      w.empty('http:operation', [['location', `/${op.name}`]]);
      if (verb === 'GET') writeBindingMessage(w, 'wsdl:input', 'http:urlEncoded', []);
      else writeBindingMessage(w, 'wsdl:input', 'mime:content', [['type', 'application/x-www-form-urlencoded']]);
      if (returnsString(op)) writeBindingMessage(w, 'wsdl:output', 'mime:mimeXml', [['part', 'Body']]);
      else writeBindingMessage(w, 'wsdl:output', 'mime:content', [['part', 'Body'], ['type', 'text/xml']]);
      w.end();
    }
    w.end();
  }
}

function writeBindingMessage(w: XmlWriter, direction: string, extension: string, attributes: Attributes): void {
  w.start(direction);
  w.empty(extension, attributes);
  w.end();
}

// ---- service ------------------------------------------------------------------------------------

function writeService(w: XmlWriter, service: ServiceName, location: string): void {
  w.start('wsdl:service', [['name', service]]);
  writeDocumentation(w, serviceDocs[service]);
  for (const [suffix, address] of [['Soap', 'soap'], ['Soap12', 'soap12'], ['HttpGet', 'http'], ['HttpPost', 'http']] as const) {
    w.start('wsdl:port', [['name', `${service}${suffix}`], ['binding', `tns:${service}${suffix}`]]);
    w.empty(`${address}:address`, [['location', location]]);
    w.end();
  }
  w.end();
}
