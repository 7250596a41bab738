/**
 * The help pages (GET /X.asmx, /X.asmx?op=Op) after .NET's DefaultWsdlHelpGenerator, from the catalog. No script and
 * nothing loaded (a strict CSP applies): the test form is a plain form post, and all dynamic text is escaped.
 */
import {
  findOperation,
  operationsOf,
  serviceDocs,
  type OperationSpec,
  type ServiceName,
  type WireType,
} from '../../catalog/operations';
import { soapAction, type DocOptions } from './wsdl';
import { escapeAttribute } from './xml-writer';

export function renderHelpPage(service: ServiceName, opts: DocOptions): string {
  const { file } = addressOf(opts);
  const ops = [...operationsOf(service)].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const items = ops.map(
    (op) =>
      `<li><a href="${escapeHtml(`${file}?op=${encodeURIComponent(op.name)}`)}">${escapeHtml(op.name)}</a>` +
      `${op.extension ? ' <span class="extension">(extension)</span>' : ''}<br>${escapeHtml(op.doc)}</li>`,
  );
  return page(service, opts, [
    `<p class="intro">${escapeHtml(serviceDocs[service])}</p>`,
    `<p class="intro">The following operations are supported. For a formal definition, please review the ` +
      `<a href="${escapeHtml(`${file}?WSDL`)}">Service Description</a>.</p>`,
    `<ul class="operations">\n${items.join('\n')}\n</ul>`,
  ]);
}

/** The page of one operation, or undefined when the service has no operation of that name. */
export function renderOperationPage(service: ServiceName, opName: string, opts: DocOptions): string | undefined {
  const op = findOperation(service, opName);
  if (!op) return undefined;
  const { file } = addressOf(opts);
  return page(service, opts, [
    `<p class="intro">Click <a href="${escapeHtml(file)}">here</a> for a complete list of operations.</p>`,
    `<h2>${escapeHtml(op.name)}</h2>`,
    `<p class="intro">${escapeHtml(op.doc)}</p>`,
    op.extension ? '<p class="intro extension">This operation is an extension: it is not part of the original interface.</p>' : '',
    parameterTable(op),
    testSection(op, file),
    ...sampleSections(op, opts),
  ]);
}

// ---- page frame ---------------------------------------------------------------------------------

/** Written after .NET's help page styles, with readable sizes and room for a phone's screen. */
const STYLE = `
body { margin: 0; color: #000; background: #fff; font-family: Verdana, Arial, sans-serif; font-size: 0.9rem; line-height: 1.4; }
#content { padding: 0 1rem 2rem; max-width: 64rem; }
.heading1 { margin: 0 -1rem 1rem; padding: 0.6rem 1rem 0.4rem; color: #fff; background: #003366; font-family: Tahoma, Verdana, sans-serif; font-size: 1.6rem; }
h2 { margin: 1.5rem 0 0.6rem; padding-top: 0.3rem; border-top: 1px solid #003366; color: #003366; font-size: 1.4rem; }
h3 { margin: 1.2rem 0 0.5rem; font-size: 1.1rem; }
a:link { color: #336699; font-weight: bold; }
a:visited { color: #6699cc; font-weight: bold; }
a:hover { color: #cc3300; }
ul.operations { padding-left: 1.2rem; }
ul.operations li { margin-top: 0.7rem; }
.extension { color: #555; font-style: italic; }
pre { margin: 0 0 1rem; padding: 0.5rem; overflow-x: auto; background: #e5e5cc; border: 1px solid #f0f0e0; font-family: "Courier New", Courier, monospace; font-size: 0.8rem; }
.value { color: darkblue; font-weight: bold; }
table { border-collapse: collapse; }
th, td { padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #dcdcdc; font-weight: normal; }
.parameters td { border-bottom: 1px solid #dcdcdc; overflow-wrap: anywhere; }
.test-form table { border: 1px solid #dcdcdc; }
.test-form input[type="text"] { box-sizing: border-box; width: 100%; min-width: 10rem; max-width: 24rem; font: inherit; }
.button { padding: 0.2rem 1rem; background: #dcdcdc; border: 1px solid #666; font: inherit; }
`;

function page(service: ServiceName, opts: DocOptions, sections: readonly string[]): string {
  const { file } = addressOf(opts);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(service)} Web Service</title>
<link rel="alternate" type="text/xml" href="${escapeHtml(`${file}?disco`)}">
<style>${STYLE}</style>
</head>
<body>
<div id="content">
<p class="heading1">${escapeHtml(service)}</p>
${sections.filter((section) => section !== '').join('\n')}
</div>
</body>
</html>
`;
}

// ---- parameters and the test form ---------------------------------------------------------------

function parameterTable(op: OperationSpec): string {
  if (op.params.length === 0) return '<h3>Parameters</h3>\n<p>This operation takes no parameters.</p>';
  const rows = op.params.map(
    (param) => `<tr><td>${escapeHtml(param.name)}</td><td>${escapeHtml(param.type)}</td><td>${escapeHtml(param.doc)}</td></tr>`,
  );
  return `<h3>Parameters</h3>
<table class="parameters">
<thead><tr><th>Parameter</th><th>Type</th><th>Description</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

/** HTTP POST form, as .NET offers it; a byte[] parameter cannot be typed in, so .NET offers none then. */
function testSection(op: OperationSpec, file: string): string {
  if (op.params.some((param) => param.type === 'base64Binary')) {
    return '<h3>Test</h3>\n<p>The test form is only available for methods with primitive types as parameters.</p>';
  }
  const rows = op.params.map((param) => {
    const id = `param-${param.name}`;
    return (
      `<tr><td><label for="${escapeHtml(id)}">${escapeHtml(param.name)}:</label></td>` +
      `<td><input type="text" id="${escapeHtml(id)}" name="${escapeHtml(param.name)}" autocomplete="off" spellcheck="false"></td></tr>`
    );
  });
  return `<h3>Test</h3>
<p>To test the operation using the HTTP POST protocol, click the 'Invoke' button.</p>
<form class="test-form" action="${escapeHtml(`${file}/${op.name}`)}" method="POST" enctype="application/x-www-form-urlencoded" target="_blank">
<table>
<thead><tr><th>Parameter</th><th>Value</th></tr></thead>
<tbody>
${rows.join('\n')}
<tr><td></td><td><button type="submit" class="button">Invoke</button></td></tr>
</tbody>
</table>
</form>`;
}

// ---- sample requests and responses --------------------------------------------------------------

/** A sample message: literal text and placeholders, which .NET shows as <font class=value>. */
type Sample = ReadonlyArray<string | Placeholder>;
interface Placeholder {
  readonly placeholder: string;
}

const ph = (placeholder: string): Placeholder => ({ placeholder });

/** Joins literal runs, placeholders and nested samples in order, so samples read as the message does. */
function sample(strings: TemplateStringsArray, ...values: ReadonlyArray<string | Placeholder | Sample>): Sample {
  const parts: Array<string | Placeholder> = [];
  strings.forEach((text, index) => {
    parts.push(text);
    if (index < values.length) {
      const value = values[index];
      if (Array.isArray(value)) parts.push(...(value as Sample));
      else parts.push(value as string | Placeholder);
    }
  });
  return parts;
}

function renderSample(parts: Sample): string {
  const html = parts
    .map((part) => (typeof part === 'string' ? escapeHtml(part) : `<span class="value">${escapeHtml(part.placeholder)}</span>`))
    .join('');
  return `<pre>${html}</pre>`;
}

function lines(items: readonly Sample[]): Sample {
  return items.flatMap((item, index) => (index === 0 ? item : ['\n', ...item]));
}

const SOAP_VERSIONS = [
  { title: 'SOAP 1.1', prefix: 'soap', envelope: 'http://schemas.xmlsoap.org/soap/envelope/', contentType: 'text/xml; charset=utf-8' },
  { title: 'SOAP 1.2', prefix: 'soap12', envelope: 'http://www.w3.org/2003/05/soap-envelope', contentType: 'application/soap+xml; charset=utf-8' },
] as const;

function sampleSections(op: OperationSpec, opts: DocOptions): string[] {
  const { host, path } = addressOf(opts);
  const sections = SOAP_VERSIONS.map((version) => {
    const headers = lines([
      sample`POST ${path} HTTP/1.1`,
      sample`Host: ${host}`,
      sample`Content-Type: ${version.contentType}`,
      sample`Content-Length: ${ph('length')}`,
      // SOAP 1.2 names the action in the Content-Type, optionally; .NET's sample leaves it out.
      ...(version.prefix === 'soap' ? [sample`SOAPAction: "${soapAction(opts.namespace, op)}"`] : []),
    ]);
    const request = sample`${headers}

${soapEnvelope(version, requestBody(op, opts.namespace))}`;
    const response = sample`HTTP/1.1 200 OK
Content-Type: ${version.contentType}
Content-Length: ${ph('length')}

${soapEnvelope(version, responseBody(op, opts.namespace))}`;
    return section(version.title, [request, response]);
  });

  const query = httpParameters(op);
  const getRequest = sample`GET ${path}/${op.name}${query.length > 0 ? sample`?${query}` : ''} HTTP/1.1
Host: ${host}
`;
  const postRequest = sample`POST ${path}/${op.name} HTTP/1.1
Host: ${host}
Content-Type: application/x-www-form-urlencoded
Content-Length: ${ph('length')}

${query}`;
  const httpResponse = sample`HTTP/1.1 200 OK
Content-Type: text/xml; charset=utf-8
Content-Length: ${ph('length')}

<?xml version="1.0" encoding="utf-8"?>
${op.result === 'string' ? sample`<string xmlns="${escapeAttribute(opts.namespace)}">${ph('string')}</string>` : [ph('xml')]}`;
  sections.push(section('HTTP GET', [getRequest, httpResponse]), section('HTTP POST', [postRequest, httpResponse]));
  return sections;
}

function section(title: string, samples: readonly Sample[]): string {
  return `<h3>${escapeHtml(title)}</h3>
<p>The following is a sample ${escapeHtml(title)} request and response. The <span class="value">placeholders</span> shown need to be replaced with actual values.</p>
${samples.map(renderSample).join('\n')}`;
}

function soapEnvelope(version: (typeof SOAP_VERSIONS)[number], body: Sample): Sample {
  const env = version.prefix;
  return sample`<?xml version="1.0" encoding="utf-8"?>
<${env}:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:${env}="${version.envelope}">
  <${env}:Body>
${body}
  </${env}:Body>
</${env}:Envelope>`;
}

/** The namespace as it appears on the wire: escaped for an XML attribute (the page escapes it again). */
function requestBody(op: OperationSpec, namespace: string): Sample {
  const xmlns = escapeAttribute(namespace);
  if (op.params.length === 0) return sample`    <${op.name} xmlns="${xmlns}" />`;
  const params = lines(op.params.map((param) => sample`      <${param.name}>${ph(param.type)}</${param.name}>`));
  return sample`    <${op.name} xmlns="${xmlns}">
${params}
    </${op.name}>`;
}

function responseBody(op: OperationSpec, namespace: string): Sample {
  const result = `${op.name}Result`;
  const value: WireType | 'xml' = op.result === 'string' ? 'string' : 'xml';
  return sample`    <${op.name}Response xmlns="${escapeAttribute(namespace)}">
      <${result}>${ph(value)}</${result}>
    </${op.name}Response>`;
}

/** uid=string&token=string…: every parameter is text over HTTP; a byte[] is its name repeated. */
function httpParameters(op: OperationSpec): Sample {
  const pairs = op.params.flatMap((param) => {
    const pair = sample`${encodeURIComponent(param.name)}=${ph('string')}`;
    return param.type === 'base64Binary' ? [pair, pair] : [pair];
  });
  return pairs.flatMap((pair, index) => (index === 0 ? pair : ['&', ...pair]));
}

// ---- helpers ------------------------------------------------------------------------------------

/** Host for the samples' Host header, the path of the .asmx, and its file name for relative links. */
function addressOf(opts: DocOptions): { host: string; path: string; file: string } {
  const url = new URL(opts.location);
  const path = url.pathname;
  return { host: url.host, path, file: path.slice(path.lastIndexOf('/') + 1) };
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}
