/**
 * The WSDL 1.1 of a service, generated from the catalog in ASMX's shape (asmx-captures/01-docs/*-wsdl.res). One
 * deliberate difference: StringArray has no soapenc:Array base, which made zeep fetch that schema from the web
 * (docs/protocol.md, "The WSDL's StringArray").
 */
import { operationsOf, serviceDocs, type OperationSpec, type ParamSpec, type ServiceName } from '../../catalog/operations';
import { createDocument, serializeDocument, type XMLBuilder } from './xml-documents';

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

/** The SOAPAction of an operation: "{namespace}{Operation}" (ASMX itself inserts '/' when the namespace lacks one). */
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
  const definitions = createDocument('wsdl:definitions', rootAttributes(opts.namespace, ops.some(takesBytes)));
  addTypes(definitions, ops, opts.namespace);
  addMessages(definitions, ops);
  addPortTypes(definitions, service, ops);
  addBindings(definitions, service, ops, opts.namespace);
  addService(definitions, service, opts.location);
  // .NET repeats the wsdl namespace on its documentation elements, which xmlbuilder2 drops as redundant.
  return serializeDocument(definitions).replaceAll('<wsdl:documentation>', `<wsdl:documentation xmlns:wsdl="${NS.wsdl}">`);
}

type Attributes = Record<string, string | undefined>;

/** The prefixes in ASMX's order; s1 only where a byte[] parameter needs the abstract types. */
function rootAttributes(namespace: string, needsAbstractTypes: boolean): Attributes {
  return {
    'xmlns:soapenc': NS.soapenc,
    'xmlns:soap12': NS.soap12,
    'xmlns:s1': needsAbstractTypes ? abstractTypesNamespace(namespace) : undefined,
    'xmlns:http': NS.http,
    'xmlns:tns': namespace,
    'xmlns:mime': NS.mime,
    'xmlns:tm': NS.tm,
    'xmlns:s': NS.s,
    'xmlns:soap': NS.soap,
    targetNamespace: namespace,
    'xmlns:wsdl': NS.wsdl,
  };
}

/** Proxies copy the text as doc comments. */
function addDocumentation(parent: XMLBuilder, text: string): void {
  parent.ele('wsdl:documentation').txt(text);
}

// ---- types --------------------------------------------------------------------------------------

function addTypes(definitions: XMLBuilder, ops: readonly OperationSpec[], namespace: string): void {
  const types = definitions.ele('wsdl:types');
  const schema = types.ele('s:schema', { elementFormDefault: 'qualified', targetNamespace: namespace });
  for (const op of ops) {
    addRequestElement(schema, op);
    addResponseElement(schema, op);
  }
  // The root element of a string result over HTTP GET/POST: <string xmlns="{ns}">…</string>.
  if (ops.some(returnsString)) schema.ele('s:element', { name: 'string', nillable: 'true', type: 's:string' });
  if (ops.some(takesBytes)) addAbstractTypes(types, namespace);
}

function addRequestElement(schema: XMLBuilder, op: OperationSpec): void {
  const type = schema.ele('s:element', { name: op.name }).ele('s:complexType');
  if (op.params.length === 0) return;
  const sequence = type.ele('s:sequence');
  for (const param of op.params) sequence.ele('s:element', parameterElementAttributes(param));
}

/** Value types cannot be omitted (minOccurs 1); strings and byte[] can be null (minOccurs 0). */
function parameterElementAttributes(param: ParamSpec): Attributes {
  const valueType = param.type === 'long' || param.type === 'int';
  return { minOccurs: valueType ? '1' : '0', maxOccurs: '1', name: param.name, type: `s:${param.type}` };
}

function addResponseElement(schema: XMLBuilder, op: OperationSpec): void {
  const result = { minOccurs: '0', maxOccurs: '1', name: `${op.name}Result` };
  const sequence = schema.ele('s:element', { name: `${op.name}Response` }).ele('s:complexType').ele('s:sequence');
  if (returnsString(op)) sequence.ele('s:element', { ...result, type: 's:string' });
  // An XmlNode result: any element, mixed content allowed.
  else sequence.ele('s:element', result).ele('s:complexType', { mixed: 'true' }).ele('s:sequence').ele('s:any');
}

/** StringArray without the soapenc:Array base (see the file comment for why). */
function addAbstractTypes(types: XMLBuilder, namespace: string): void {
  types
    .ele('s:schema', { targetNamespace: abstractTypesNamespace(namespace) })
    .ele('s:complexType', { name: 'StringArray' })
    .ele('s:sequence')
    .ele('s:element', { minOccurs: '0', maxOccurs: 'unbounded', name: 'String', type: 's:string' });
}

// ---- messages -----------------------------------------------------------------------------------

function addMessages(definitions: XMLBuilder, ops: readonly OperationSpec[]): void {
  for (const op of ops) {
    addMessage(definitions, `${op.name}SoapIn`, [{ name: 'parameters', element: `tns:${op.name}` }]);
    addMessage(definitions, `${op.name}SoapOut`, [{ name: 'parameters', element: `tns:${op.name}Response` }]);
  }
  for (const form of ['HttpGet', 'HttpPost'] as const) {
    for (const op of ops) {
      addMessage(definitions, `${op.name}${form}In`, op.params.map(httpPartAttributes));
      addMessage(definitions, `${op.name}${form}Out`, [{ name: 'Body', element: returnsString(op) ? 'tns:string' : undefined }]);
    }
  }
}

function addMessage(definitions: XMLBuilder, name: string, parts: readonly Attributes[]): void {
  const message = definitions.ele('wsdl:message', { name });
  for (const part of parts) message.ele('wsdl:part', part);
}

/** Over HTTP every parameter is text; a byte[] is the parameter repeated, one value per byte. */
function httpPartAttributes(param: ParamSpec): Attributes {
  return { name: param.name, type: param.type === 'base64Binary' ? 's1:StringArray' : 's:string' };
}

// ---- port types ---------------------------------------------------------------------------------

function addPortTypes(definitions: XMLBuilder, service: ServiceName, ops: readonly OperationSpec[]): void {
  for (const form of ['Soap', 'HttpGet', 'HttpPost'] as const) {
    const portType = definitions.ele('wsdl:portType', { name: `${service}${form}` });
    for (const op of ops) {
      const operation = portType.ele('wsdl:operation', { name: op.name });
      addDocumentation(operation, operationDocumentation(op));
      operation.ele('wsdl:input', { message: `tns:${op.name}${form}In` });
      operation.ele('wsdl:output', { message: `tns:${op.name}${form}Out` });
    }
  }
}

// ---- bindings -----------------------------------------------------------------------------------

function addBindings(definitions: XMLBuilder, service: ServiceName, ops: readonly OperationSpec[], namespace: string): void {
  for (const [suffix, prefix] of [['Soap', 'soap'], ['Soap12', 'soap12']] as const) {
    const binding = definitions.ele('wsdl:binding', { name: `${service}${suffix}`, type: `tns:${service}Soap` });
    binding.ele(`${prefix}:binding`, { transport: SOAP_HTTP_TRANSPORT });
    for (const op of ops) {
      const operation = binding.ele('wsdl:operation', { name: op.name });
      operation.ele(`${prefix}:operation`, { soapAction: soapAction(namespace, op), style: 'document' });
      operation.ele('wsdl:input').ele(`${prefix}:body`, { use: 'literal' });
      operation.ele('wsdl:output').ele(`${prefix}:body`, { use: 'literal' });
    }
  }

  for (const [form, verb] of [['HttpGet', 'GET'], ['HttpPost', 'POST']] as const) {
    const binding = definitions.ele('wsdl:binding', { name: `${service}${form}`, type: `tns:${service}${form}` });
    binding.ele('http:binding', { verb });
    for (const op of ops) {
      const operation = binding.ele('wsdl:operation', { name: op.name });
      operation.ele('http:operation', { location: `/${op.name}` });
      const input = operation.ele('wsdl:input');
      if (verb === 'GET') input.ele('http:urlEncoded');
      else input.ele('mime:content', { type: 'application/x-www-form-urlencoded' });
      const output = operation.ele('wsdl:output');
      if (returnsString(op)) output.ele('mime:mimeXml', { part: 'Body' });
      else output.ele('mime:content', { part: 'Body', type: 'text/xml' });
    }
  }
}

// ---- service ------------------------------------------------------------------------------------

function addService(definitions: XMLBuilder, service: ServiceName, location: string): void {
  const serviceElement = definitions.ele('wsdl:service', { name: service });
  addDocumentation(serviceElement, serviceDocs[service]);
  for (const [suffix, address] of [['Soap', 'soap'], ['Soap12', 'soap12'], ['HttpGet', 'http'], ['HttpPost', 'http']] as const) {
    serviceElement.ele('wsdl:port', { name: `${service}${suffix}`, binding: `tns:${service}${suffix}` }).ele(`${address}:address`, { location });
  }
}
