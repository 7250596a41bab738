/** SOAP faults and HTTP GET/POST plain-text errors (DECISIONS.md §3), worded as .NET words them. */
import { escapeText } from './xml-writer';

export type SoapVersion = '1.1' | '1.2';

export const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope';

export const SOAP_CONTENT_TYPE: Record<SoapVersion, string> = {
  '1.1': 'text/xml; charset=utf-8',
  '1.2': 'application/soap+xml; charset=utf-8',
};

/** SOAP 1.1 names; SOAP 1.2 answers Client as Sender and Server as Receiver. */
export type FaultCode = 'Client' | 'Server' | 'VersionMismatch' | 'MustUnderstand';

export interface SoapFault {
  readonly code: FaultCode;
  readonly message: string;
}

/** The opening of every SOAP answer, byte for byte as ASMX writes it. */
export function envelopeStart(version: SoapVersion): string {
  const ns = version === '1.1' ? SOAP11_NS : SOAP12_NS;
  return (
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}" ` +
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">'
  );
}

export const ENVELOPE_END = '</soap:Body></soap:Envelope>';

const SOAP12_CODE: Record<FaultCode, string> = {
  Client: 'Sender',
  Server: 'Receiver',
  VersionMismatch: 'VersionMismatch',
  MustUnderstand: 'MustUnderstand',
};

// ASMX answers a request whose root is not a known envelope with this header, naming both versions.
const UPGRADE_HEADER =
  '<soap:Header><soap12:Upgrade xmlns:soap12="http://www.w3.org/2003/05/soap-envelope">' +
  '<soap12:SupportedEnvelope qname="soap:Envelope" xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" />' +
  '<soap12:SupportedEnvelope qname="soap12:Envelope" xmlns:soap12="http://www.w3.org/2003/05/soap-envelope" />' +
  '</soap12:Upgrade></soap:Header>';

export function renderSoapFault(version: SoapVersion, fault: SoapFault): string {
  const header = fault.code === 'VersionMismatch' ? UPGRADE_HEADER : '';
  // ASMX leaves out the detail element of a MustUnderstand fault only.
  const withDetail = fault.code !== 'MustUnderstand';
  const text = escapeText(fault.message);
  const body =
    version === '1.1'
      ? `<soap:Fault><faultcode>soap:${fault.code}</faultcode><faultstring>${text}</faultstring>${withDetail ? '<detail />' : ''}</soap:Fault>`
      : `<soap:Fault><soap:Code><soap:Value>soap:${SOAP12_CODE[fault.code]}</soap:Value></soap:Code>` +
        `<soap:Reason><soap:Text xml:lang="en">${text}</soap:Text></soap:Reason>${withDetail ? '<soap:Detail />' : ''}</soap:Fault>`;
  return `${envelopeStart(version)}${header}<soap:Body>${body}${ENVELOPE_END}`;
}

/** "Server was unable to read request. ---> There is an error in XML document (1, 268). ---> …" */
export function readFailure(line: number, position: number, inner: string): SoapFault {
  return {
    code: 'Client',
    message: `Server was unable to read request. ---> There is an error in XML document (${line}, ${position}). ---> ${inner}`,
  };
}

/** "Server was unable to process request. ---> …" */
export function processFailure(inner: string): SoapFault {
  return { code: 'Server', message: `Server was unable to process request. ---> ${inner}` };
}

export const messages = {
  missingParameter: (name: string) => `Missing parameter: ${name}.`,
  cannotConvert: (value: string, dotnetType: string, inner: string) =>
    `Cannot convert ${value} to ${dotnetType}.\nParameter name: type ---> ${inner}`,
  methodNotValid: (name: string) => `${name} Web Service method name is not valid.`,
  methodCase: (given: string, actual: string) =>
    `Invalid method name '${given}', method names are case sensitive. The method name '${actual}' with the same name but different casing was found.\nParameter name: methodName`,
  requestFormatInvalid: (contentType: string) => `Request format is invalid: ${contentType}.`,
  requestFormatUnrecognized: (pathEnd: string) => `Request format is unrecognized for URL unexpectedly ending in '${pathEnd}'.`,
  unknownSoapAction: (action: string) => `Server did not recognize the value of HTTP Header SOAPAction: ${action}.`,
  unknownSoap12Action: (action: string) => `Unable to handle request. The action '${action}' was not recognized.`,
  noSoap12Action: 'Unable to handle request without a valid action parameter. Please supply a valid soap action.',
  versionMismatch: (found: string, expected: string) =>
    `Possible SOAP version mismatch: Envelope namespace ${found} was unexpected. Expecting ${expected}.`,
  headerNotUnderstood: (name: string) => `SOAP header ${name} was not understood.`,
  actionBodyMismatch: (action: string, body: string) =>
    `The SOAPAction header names the operation ${action} but the body holds ${body}.`,
  requestTooLarge: 'Maximum request length exceeded.',
  invalidUtf8: 'The request is not valid UTF-8.',
  internalError: (incident: string) => `Internal error (incident ${incident}).`,
};
