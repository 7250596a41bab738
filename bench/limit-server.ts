/**
 * The limit: a bare node:http server that answers the same bytes as the service with the least
 * honest work. It reads the request body, finds the operation (SOAPAction, the action= of a SOAP
 * 1.2 Content-Type or the first element of the body, or the path of HTTP GET/POST) and the listing
 * asked for (the `dir`, `order` and `desc` parameters), and writes the answer the real service gave for that call,
 * captured beforehand, with the same status and headers. No XML reader, no token, no sign, no
 * database: what is left is HTTP itself, which no implementation on node:http can go below.
 *
 * Usage: node --import tsx bench/limit-server.ts <answers.json>   (prints "listening on …")
 * answers.json: [{ key: "<form>|<operation>|<dir>|<order>|<desc>", contentType, body (base64) }]
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface LimitAnswer {
  readonly key: string;
  readonly contentType: string;
  readonly body: string;
}

export function limitKey(form: string, op: string, dir: string, order: string, desc: string): string {
  return `${form}|${op}|${dir}|${order}|${desc}`;
}

interface Prepared {
  readonly headers: http.OutgoingHttpHeaders;
  readonly body: Buffer;
}

/** The text between `<name>` and `</name>`. */
function xmlValue(body: string, name: string): string {
  const start = body.indexOf(`<${name}>`);
  if (start < 0) return '';
  const end = body.indexOf(`</${name}>`, start);
  return body.slice(start + name.length + 2, end < 0 ? undefined : end);
}

/** The value of `name=` in a query string or form body, decoded. */
function formValue(query: string, name: string): string {
  const needle = `${name}=`;
  let start: number;
  if (query.startsWith(needle)) start = needle.length;
  else {
    const at = query.indexOf(`&${needle}`);
    if (at < 0) return '';
    start = at + 1 + needle.length;
  }
  const end = query.indexOf('&', start);
  return decodeURIComponent(query.slice(start, end < 0 ? undefined : end));
}

/** The operation of a SOAP call: SOAPAction (1.1), action= (1.2), else the first element in the Body. */
function soapOperation(req: http.IncomingMessage, body: string): string {
  const soapAction = req.headers.soapaction;
  if (typeof soapAction === 'string') return soapAction.replace(/"/g, '').slice(soapAction.replace(/"/g, '').lastIndexOf('/') + 1);
  const contentType = req.headers['content-type'] ?? '';
  const action = /action="?([^";]+)/.exec(contentType);
  if (action) return action[1].slice(action[1].lastIndexOf('/') + 1);
  const bodyAt = body.indexOf(':Body>');
  const match = /<(?:\w+:)?(\w+)/.exec(body.slice(bodyAt + 6));
  return match ? match[1] : '';
}

export function startLimitServer(answers: readonly LimitAnswer[], port = 0): Promise<http.Server> {
  const prepared = new Map<string, Prepared>();
  for (const answer of answers) {
    const body = Buffer.from(answer.body, 'base64');
    prepared.set(answer.key, {
      body,
      headers: {
        'Content-Type': answer.contentType,
        'Cache-Control': 'private, max-age=0',
        'X-Content-Type-Options': 'nosniff',
        'Content-Length': body.length,
      },
    });
  }
  const reply = (res: http.ServerResponse, key: string) => {
    const answer = prepared.get(key);
    if (!answer) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end(`no answer for ${key}`);
      return;
    }
    res.writeHead(200, answer.headers);
    res.end(answer.body);
  };

  const server = http.createServer({ keepAliveTimeout: 15_000 }, (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    if (req.method === 'GET') {
      const query = url.slice(q + 1);
      reply(res, limitKey('get', pathname.slice(pathname.lastIndexOf('/') + 1), formValue(query, 'dir'), formValue(query, 'order'), formValue(query, 'desc')));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (pathname.toLowerCase().endsWith('.asmx')) {
        const form = (req.headers['content-type'] ?? '').startsWith('text/xml') ? 'soap11' : 'soap12';
        reply(res, limitKey(form, soapOperation(req, body), xmlValue(body, 'dir'), xmlValue(body, 'order'), xmlValue(body, 'desc')));
      } else {
        reply(res, limitKey('post', pathname.slice(pathname.lastIndexOf('/') + 1), formValue(body, 'dir'), formValue(body, 'order'), formValue(body, 'desc')));
      }
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const answers = JSON.parse(readFileSync(process.argv[2], 'utf8')) as LimitAnswer[];
  const server = await startLimitServer(answers);
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
  });
}
