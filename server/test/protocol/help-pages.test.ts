import { describe, expect, it } from 'vitest';
import { operationsOf, services, type ServiceName } from '../../src/catalog/operations';
import { renderHelpPage, renderOperationPage } from '../../src/protocol/asmx/help-pages';
import type { DocOptions } from '../../src/protocol/asmx/wsdl';

const optionsFor = (service: ServiceName, namespace = 'http://tempuri.org/'): DocOptions => ({
  namespace,
  location: `http://127.0.0.1:8080/${service}.asmx`,
});

function operationPage(service: ServiceName, op: string, options = optionsFor(service)): string {
  const html = renderOperationPage(service, op, options);
  if (html === undefined) throw new Error(`no page for ${service}.${op}`);
  return html;
}

const decode = (html: string) =>
  html.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

/** What a reader sees in the sample blocks, placeholders included, in page order. */
const samplesOf = (html: string) => [...html.matchAll(/<pre>([\s\S]*?)<\/pre>/g)].map((m) => decode(m[1].replace(/<[^>]+>/g, '')));

/** The text shown under a heading up to the next one. */
const sectionOf = (html: string, heading: string) => html.split(`<h3>${heading}</h3>`)[1]?.split('<h3>')[0] ?? '';

const attributesOf = (tag: string) => Object.fromEntries([...tag.matchAll(/([a-z-]+)="([^"]*)"/g)].map((m) => [m[1], decode(m[2])]));

/** Tags nest properly and every < and & in the text is escaped: what a browser would parse cleanly. */
function expectWellFormed(html: string): void {
  const voidElements = new Set(['meta', 'link', 'input', 'br']);
  const open: string[] = [];
  for (const [, closing, name] of html.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g)) {
    const tag = name.toLowerCase();
    if (voidElements.has(tag)) continue;
    if (closing) expect(open.pop(), `</${tag}>`).toBe(tag);
    else open.push(tag);
  }
  expect(open).toEqual([]);
  expect(html.replace(/<style>[\s\S]*?<\/style>/, '')).not.toMatch(/<(?![a-zA-Z/!])|&(?!(amp|lt|gt|quot|#\d+);)/);
}

describe('the service help page', () => {
  it.each(services)('of %s links every operation to its page', (service) => {
    const html = renderHelpPage(service, optionsFor(service));
    const links = [...html.matchAll(/<a href="([^"]*)">([^<]*)<\/a>/g)].filter(([, href]) => href.includes('?op='));
    expect(links.map(([, href]) => decode(href)).sort()).toEqual(operationsOf(service).map((op) => `${service}.asmx?op=${op.name}`).sort());
    for (const [, href, text] of links) expect(href).toBe(`${service}.asmx?op=${text}`);
  });

  it('is titled "<Service> Web Service"', () => {
    expect(renderHelpPage('UserService', optionsFor('UserService'))).toContain('<title>UserService Web Service</title>');
  });

  it('lists the operations alphabetically', () => {
    const names = (service: ServiceName) =>
      [...renderHelpPage(service, optionsFor(service)).matchAll(/\?op=([A-Za-z]+)"/g)].map((m) => m[1]);
    expect(names('OAuthService')).toEqual(['APILogin', 'Login', 'Logout']);
    expect(names('FileService')).toEqual([...names('FileService')].sort());
  });

  it('marks the extensions, and only them', () => {
    const html = renderHelpPage('FileService', optionsFor('FileService'));
    const marked = [...html.matchAll(/<li><a [^>]*>([A-Za-z]+)<\/a>( <span class="extension">\(extension\)<\/span>)?/g)];
    const extensions = operationsOf('FileService').filter((op) => op.extension).map((op) => op.name);
    expect(marked.filter((m) => m[2]).map((m) => m[1]).sort()).toEqual([...extensions].sort());
    expect(marked).toHaveLength(operationsOf('FileService').length);
  });

  it("gives each operation the catalog's one-line doc, escaped", () => {
    const html = renderHelpPage('OAuthService', optionsFor('OAuthService'));
    expect(html).toContain('<br>Logs in with an account name (or numeric id) and password. Returns a token and its signing key; &lt;token&gt;0&lt;/token&gt; on a wrong name or password.</li>');
  });

  it('links to the Service Description (the WSDL)', () => {
    expect(renderHelpPage('FileService', optionsFor('FileService'))).toContain('<a href="FileService.asmx?WSDL">Service Description</a>');
  });
});

describe('an operation page', () => {
  it('is undefined for an operation the service does not have', () => {
    expect(renderOperationPage('FileService', 'NoSuchOp', optionsFor('FileService'))).toBeUndefined();
    expect(renderOperationPage('FileService', 'Login', optionsFor('FileService'))).toBeUndefined();
    expect(renderOperationPage('FileService', 'fileadd', optionsFor('FileService'))).toBeUndefined();
  });

  it('shows the operation, its doc and every parameter with its type and doc', () => {
    const html = operationPage('FileService', 'FileAdd');
    expect(html).toContain('<h2>FileAdd</h2>');
    expect(html).toContain('<p class="intro">Adds a file record after its upload has completed, or for content the account already owns.</p>');
    const rows = [...sectionOf(html, 'Parameters').matchAll(/<tr><td>([^<]*)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><\/tr>/g)];
    expect(rows.map(([, name, type, doc]) => ({ name, type, doc: decode(doc) }))).toEqual(
      operationsOf('FileService')
        .find((op) => op.name === 'FileAdd')
        ?.params.map(({ name, type, doc }) => ({ name, type, doc })),
    );
  });

  it('says when an operation is an extension', () => {
    expect(operationPage('FileService', 'Move')).toContain('This operation is an extension');
    expect(operationPage('FileService', 'FileAdd')).not.toContain('This operation is an extension');
  });

  it('shows a SOAP 1.1 sample request and response', () => {
    const [request, response] = samplesOf(sectionOf(operationPage('OAuthService', 'Login'), 'SOAP 1.1'));
    expect(request).toBe(`POST /OAuthService.asmx HTTP/1.1
Host: 127.0.0.1:8080
Content-Type: text/xml; charset=utf-8
Content-Length: length
SOAPAction: "http://tempuri.org/Login"

<?xml version="1.0" encoding="utf-8"?>
<soap:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">
  <soap:Body>
    <Login xmlns="http://tempuri.org/">
      <uid>string</uid>
      <pwd>string</pwd>
    </Login>
  </soap:Body>
</soap:Envelope>`);
    expect(response).toBe(`HTTP/1.1 200 OK
Content-Type: text/xml; charset=utf-8
Content-Length: length

<?xml version="1.0" encoding="utf-8"?>
<soap:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">
  <soap:Body>
    <LoginResponse xmlns="http://tempuri.org/">
      <LoginResult>xml</LoginResult>
    </LoginResponse>
  </soap:Body>
</soap:Envelope>`);
  });

  it('shows a SOAP 1.2 sample request and response', () => {
    const [request, response] = samplesOf(sectionOf(operationPage('OAuthService', 'Login'), 'SOAP 1.2'));
    expect(request).toBe(`POST /OAuthService.asmx HTTP/1.1
Host: 127.0.0.1:8080
Content-Type: application/soap+xml; charset=utf-8
Content-Length: length

<?xml version="1.0" encoding="utf-8"?>
<soap12:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:soap12="http://www.w3.org/2003/05/soap-envelope">
  <soap12:Body>
    <Login xmlns="http://tempuri.org/">
      <uid>string</uid>
      <pwd>string</pwd>
    </Login>
  </soap12:Body>
</soap12:Envelope>`);
    expect(response).toContain('Content-Type: application/soap+xml; charset=utf-8');
    expect(response).toContain('      <LoginResult>xml</LoginResult>');
  });

  it('shows HTTP GET and HTTP POST sample requests and responses', () => {
    const html = operationPage('OAuthService', 'Login');
    const xmlResponse = `HTTP/1.1 200 OK
Content-Type: text/xml; charset=utf-8
Content-Length: length

<?xml version="1.0" encoding="utf-8"?>
xml`;
    expect(samplesOf(sectionOf(html, 'HTTP GET'))).toEqual([
      `GET /OAuthService.asmx/Login?uid=string&pwd=string HTTP/1.1
Host: 127.0.0.1:8080
`,
      xmlResponse,
    ]);
    expect(samplesOf(sectionOf(html, 'HTTP POST'))).toEqual([
      `POST /OAuthService.asmx/Login HTTP/1.1
Host: 127.0.0.1:8080
Content-Type: application/x-www-form-urlencoded
Content-Length: length

uid=string&pwd=string`,
      xmlResponse,
    ]);
  });

  it('types the SOAP placeholders and styles every placeholder', () => {
    const html = operationPage('FileService', 'FolderShare');
    const [request] = samplesOf(sectionOf(html, 'SOAP 1.1'));
    expect(request).toContain('      <uid>long</uid>\n      <token>string</token>\n      <dirids>string</dirids>');
    expect(request).toContain('      <downValue>int</downValue>');
    expect(html).toContain('&lt;uid&gt;<span class="value">long</span>&lt;/uid&gt;');
    expect(html).toContain('Content-Length: <span class="value">length</span>');
    expect(html).toContain('?uid=<span class="value">string</span>&amp;token=');
  });

  it('shows ShareImageUpload with base64Binary in SOAP, the byte[] name repeated over HTTP, and a string result', () => {
    const html = operationPage('FileService', 'ShareImageUpload');
    const [soapRequest, soapResponse] = samplesOf(sectionOf(html, 'SOAP 1.1'));
    expect(soapRequest).toContain('      <byteFileStream>base64Binary</byteFileStream>');
    expect(soapResponse).toContain('      <ShareImageUploadResult>string</ShareImageUploadResult>');
    const [getRequest, getResponse] = samplesOf(sectionOf(html, 'HTTP GET'));
    expect(getRequest).toContain('GET /FileService.asmx/ShareImageUpload?uid=string&token=string&fid=string&ImagefileName=string&byteFileStream=string&byteFileStream=string HTTP/1.1');
    expect(getResponse).toMatch(/<\?xml version="1.0" encoding="utf-8"\?>\n<string xmlns="http:\/\/tempuri.org\/">string<\/string>$/);
    expect(samplesOf(sectionOf(html, 'HTTP POST'))[0]).toMatch(/\n\nuid=string&token=string&fid=string&ImagefileName=string&byteFileStream=string&byteFileStream=string$/);
  });

  it('has a test form that posts exactly the parameters to X.asmx/Op', () => {
    const html = operationPage('FileService', 'FolderRename');
    const forms = [...html.matchAll(/<form [^>]*>/g)];
    expect(forms).toHaveLength(1);
    expect(attributesOf(forms[0][0])).toMatchObject({
      action: 'FileService.asmx/FolderRename',
      method: 'POST',
      enctype: 'application/x-www-form-urlencoded',
    });
    const form = html.slice(html.indexOf('<form'), html.indexOf('</form>'));
    const inputs = [...form.matchAll(/<input [^>]*>/g)].map((m) => attributesOf(m[0]));
    expect(inputs.map((input) => input.name)).toEqual(['uid', 'token', 'dirid', 'newname', 'sign']);
    for (const input of inputs) {
      expect(input.type).toBe('text');
      expect(form).toContain(`<label for="${input.id}">${input.name}:</label>`);
    }
    expect(form).toContain('<button type="submit" class="button">Invoke</button>');
  });

  it('has no test form for ShareImageUpload, and says why as .NET does', () => {
    const html = operationPage('FileService', 'ShareImageUpload');
    expect(html).not.toContain('<form');
    expect(sectionOf(html, 'Test')).toContain('The test form is only available for methods with primitive types as parameters.');
  });

  it('takes the path and host of the samples from the location, and links relatively', () => {
    const html = operationPage('FileService', 'FileAdd', {
      namespace: 'http://tempuri.org/',
      location: 'https://files.example.com:8443/api/FileService.asmx',
    });
    const [request] = samplesOf(sectionOf(html, 'SOAP 1.1'));
    expect(request.split('\n').slice(0, 2)).toEqual(['POST /api/FileService.asmx HTTP/1.1', 'Host: files.example.com:8443']);
    expect(samplesOf(sectionOf(html, 'HTTP POST'))[0]).toMatch(/^POST \/api\/FileService.asmx\/FileAdd HTTP\/1.1\n/);
    expect(html).toContain('action="FileService.asmx/FileAdd"');
    expect(html).toContain('<a href="FileService.asmx">here</a>');
  });

  it('escapes every piece of dynamic text, the namespace included', () => {
    const namespace = 'urn:x<&"y/';
    const html = operationPage('FileService', 'FileAdd', optionsFor('FileService', namespace));
    expect(html).not.toContain('urn:x<');
    const [request, response] = samplesOf(sectionOf(html, 'SOAP 1.1'));
    // The header carries the action as is; in XML the namespace is an escaped attribute value.
    expect(request).toContain('SOAPAction: "urn:x<&"y/FileAdd"');
    expect(request).toContain('    <FileAdd xmlns="urn:x&lt;&amp;&quot;y/">');
    expect(response).toContain('    <FileAddResponse xmlns="urn:x&lt;&amp;&quot;y/">');
    const stringResult = samplesOf(sectionOf(operationPage('FileService', 'ShareImageUpload', optionsFor('FileService', namespace)), 'HTTP GET'))[1];
    expect(stringResult).toContain('<string xmlns="urn:x&lt;&amp;&quot;y/">string</string>');
    expectWellFormed(html);
  });
});

describe('every help and operation page', () => {
  const pages = services.flatMap((service) => [
    { name: `${service}.asmx`, html: renderHelpPage(service, optionsFor(service)) },
    ...operationsOf(service).map((op) => ({ name: `${service}.asmx?op=${op.name}`, html: operationPage(service, op.name) })),
  ]);

  it.each(pages)('$name is an HTML5 page readable on a phone', ({ html }) => {
    expect(html.startsWith('<!DOCTYPE html>\n<html lang="en">')).toBe(true);
    expect(html).toContain('<meta charset="utf-8">');
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expectWellFormed(html);
  });

  it.each(pages)('$name runs no script and loads nothing', ({ html }) => {
    expect(html).not.toMatch(/<script|\son[a-z]+=|\sstyle=|\ssrc=|javascript:/i);
    for (const [, href] of html.matchAll(/href="([^"]*)"/g)) expect(href).not.toMatch(/^([a-z]+:|\/\/)/i);
    expect(html).not.toMatch(/url\(|@import/);
  });
});
