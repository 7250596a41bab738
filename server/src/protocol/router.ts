/** Everything under /X.asmx: help, WSDL, disco and operation pages on GET, SOAP on POST, and /X.asmx/Op forms. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { services, type ServiceName } from '../catalog/operations';
import { renderDisco } from './asmx/disco';
import { messages, processFailure, renderSoapFault, SOAP_CONTENT_TYPE, type SoapVersion } from './asmx/faults';
import { renderHelpPage, renderOperationPage } from './asmx/help-pages';
import {
  answer,
  answerPlainText,
  BINDING_CACHE,
  BodyTooLargeError,
  OPERATION_CACHE,
  parseContentType,
  readBody,
  requestFacts,
} from './http-common';
import { answerHttpForm, operationForPath } from './asmx/http-forms';
import type { ProtocolEnv } from './pipeline';
import { answerSoap, declaredAction, largestBodyLimit, operationForAction, soapVersionOf } from './asmx/soap';
import { renderWsdl } from './asmx/wsdl';
import { escapeText } from './asmx/xml-writer';
import type { RequestTarget } from './request-target';

const SERVICE_PATH = /^\/([A-Za-z]+)\.asmx(?:\/(.*))?$/i;

/** Help and operation pages carry no script; this keeps them that way and out of frames. */
const PAGE_SECURITY = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
};

/** An error page for requests that never reach a service (unknown .asmx, wrong method), as ASP.NET answers them. */
export function answerErrorPage(res: ServerResponse, status: number, title: string, detail: string, headers: Record<string, string> = {}): void {
  const html =
    `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeText(title)}</title></head>` +
    `<body><h1>${escapeText(title)}</h1><p>${escapeText(detail)}</p></body></html>\n`;
  answer(res, { status, contentType: 'text/html; charset=utf-8', cacheControl: BINDING_CACHE, headers: { ...PAGE_SECURITY, ...headers } }, html);
}

const servicesByLowerName: ReadonlyMap<string, ServiceName> = new Map(services.map((service) => [service.toLowerCase(), service]));

export function matchServicePath(pathname: string): { service: ServiceName | null; name: string; operation: string | undefined } | null {
  const match = SERVICE_PATH.exec(pathname);
  if (!match) return null;
  // IIS paths are case-insensitive; operation names are not (see operationForPath).
  const service = servicesByLowerName.get(match[1].toLowerCase()) ?? null;
  return { service, name: match[1], operation: match[2] };
}

export class ServiceRouter {
  private readonly documents = new Map<string, string>();

  constructor(private readonly env: ProtocolEnv) {}

  /** Documents depend only on the service and the address it is reached at: render each once. */
  private document(key: string, render: () => string): string {
    let text = this.documents.get(key);
    if (text === undefined) {
      if (this.documents.size > 256) this.documents.clear();
      text = render();
      this.documents.set(key, text);
    }
    return text;
  }

  async route(req: IncomingMessage, res: ServerResponse, url: RequestTarget): Promise<boolean> {
    const match = matchServicePath(url.pathname);
    if (!match) return false;
    if (!match.service) {
      answerErrorPage(res, 404, 'The resource cannot be found.', `${url.pathname} is not a service of this server.`);
      return true;
    }
    const service = match.service;
    const facts = requestFacts(req, this.env.config);
    const method = req.method ?? 'GET';

    if (match.operation === undefined) {
      if (method === 'GET' || method === 'HEAD') return this.answerDocumentation(res, service, url, facts.baseUrl), true;
      if (method === 'POST') return await this.answerSoapPost(req, res, service, facts), true;
      answerErrorPage(res, 405, 'Method not allowed.', `${method} is not allowed on ${url.pathname}.`, { Allow: 'GET, HEAD, POST' });
      return true;
    }

    if (method === 'HEAD') {
      answer(res, { status: 500, contentType: 'text/html', cacheControl: BINDING_CACHE });
      return true;
    }
    if (method !== 'GET' && method !== 'POST') {
      answerPlainText(res, messages.requestFormatUnrecognized(`/${match.operation}`));
      return true;
    }
    const op = operationForPath(service, match.operation);
    if (typeof op === 'string') answerPlainText(res, op);
    else await answerHttpForm(req, res, op, facts, this.env);
    return true;
  }

  private answerDocumentation(res: ServerResponse, service: ServiceName, url: RequestTarget, baseUrl: string): void {
    const options = { namespace: this.env.config.namespace, location: `${baseUrl}/${service}.asmx` };
    const query = new Map([...url.searchParams].map(([k, v]) => [k.toLowerCase(), v]));
    const xml = { status: 200, contentType: 'text/xml; charset=utf-8', cacheControl: OPERATION_CACHE };
    const html = { status: 200, contentType: 'text/html; charset=utf-8', cacheControl: OPERATION_CACHE, headers: PAGE_SECURITY };
    if (query.has('wsdl')) {
      answer(res, xml, this.document(`wsdl ${service} ${options.location}`, () => renderWsdl(service, options)));
    } else if (query.has('disco')) {
      answer(res, xml, this.document(`disco ${service} ${options.location}`, () => renderDisco(service, options)));
    } else if (query.has('op')) {
      const name = query.get('op') ?? '';
      const page = renderOperationPage(service, name, options);
      if (page === undefined) answerErrorPage(res, 404, 'No such operation.', `${service} has no operation named ${name}.`);
      else answer(res, html, page);
    } else {
      answer(res, html, this.document(`help ${service} ${options.location}`, () => renderHelpPage(service, options)));
    }
  }

  private async answerSoapPost(req: IncomingMessage, res: ServerResponse, service: ServiceName, facts: ReturnType<typeof requestFacts>): Promise<void> {
    const contentType = parseContentType(req.headers['content-type']);
    if (!contentType) {
      req.resume();
      return answer(res, { status: 415, contentType: SOAP_CONTENT_TYPE['1.1'], cacheControl: BINDING_CACHE });
    }
    const version = soapVersionOf(contentType);
    if (!version) {
      req.resume();
      if (contentType.mediaType === 'application/x-www-form-urlencoded') {
        // ASMX takes a form posted to the service path for a SOAP 1.2 request it cannot read.
        return this.soapFault(res, '1.2', processFailure('Data at the root level is invalid. Line 1, position 1.'));
      }
      return answerErrorPage(res, 500, 'Request format is unrecognized.', `Content-Type ${contentType.raw} is not a SOAP request.`);
    }
    const action = declaredAction(req, version, contentType);
    const op = action === undefined ? undefined : operationForAction(service, this.env.config.namespace, action);
    let body: Buffer;
    try {
      const { maxBodyBytes } = this.env.config.limits;
      body = await readBody(req, op ? (op.maxBodyBytes ?? maxBodyBytes) : largestBodyLimit(service, maxBodyBytes));
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        return this.soapFault(res, version, { code: 'Client', message: `Server was unable to read request. ---> ${messages.requestTooLarge}` }, true);
      }
      throw error;
    }
    await answerSoap(res, service, version, contentType, action, op, body, facts, this.env);
  }

  private soapFault(res: ServerResponse, version: SoapVersion, fault: Parameters<typeof renderSoapFault>[1], closeConnection = false): void {
    const headers: Record<string, string> = closeConnection ? { Connection: 'close' } : {};
    answer(res, { status: 500, contentType: SOAP_CONTENT_TYPE[version], cacheControl: BINDING_CACHE, headers }, renderSoapFault(version, fault));
  }
}
