/**
 * Hostile input against the whole service: each gets its documented answer (DECISIONS.md §3,
 * docs/protocol.md "Errors"), nothing is resolved or expanded, and the server stays up.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAccount, element, startTestApp, type TestApp } from '../helpers/app-server';
import { callInForm, ops, resultXml, send, soapEnvelope } from '../helpers/requests';

let app: TestApp;
const { Login } = ops;

beforeAll(async () => {
  app = await startTestApp();
  await addAccount(app, 'alice', 'alice-password-1');
});
afterAll(() => app.close());

const soap11 = (action: string, body: string | Buffer) =>
  send(app.url, 'POST', '/FileService.asmx', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"http://tempuri.org/${action}"` }, body);
const soap12 = (body: string | Buffer) => send(app.url, 'POST', '/FileService.asmx', { 'Content-Type': 'application/soap+xml; charset=utf-8' }, body);

const renameCall = (newname: string) =>
  `<FolderRename xmlns="http://tempuri.org/"><uid>1001</uid><token>t</token><dirid>1</dirid><newname>${newname}</newname><sign>s</sign></FolderRename>`;

async function expectServerUp(): Promise<void> {
  const answer = await callInForm(app.url, 'post', Login, { uid: 'alice', pwd: 'alice-password-1' });
  expect(element(resultXml(answer, Login), 'token')?.text).not.toBe('0');
}

describe('XML that tries to reach outside or expand', () => {
  it('an external entity (XXE) is never resolved: 400, nothing read', async () => {
    const xml = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${soapEnvelope('1.1', renameCall('&xxe;'))}`;
    const answer = await soap11('FolderRename', xml);
    expect(answer.status).toBe(400);
    expect(answer.body).toBe('');
  });

  it('a billion-laughs entity bomb is refused at once, without expanding', async () => {
    const levels = Array.from({ length: 10 }, (_, i) =>
      i === 0 ? '<!ENTITY l0 "lol">' : `<!ENTITY l${i} "${`&l${i - 1};`.repeat(10)}">`,
    ).join('');
    const xml = `<?xml version="1.0"?><!DOCTYPE x [${levels}]>${soapEnvelope('1.1', renameCall('&l9;'))}`;
    const answer = await soap11('FolderRename', xml);
    expect(answer.status).toBe(400);
  });

  it('a DTD in a SOAP 1.2 request routed by its body is a Receiver fault naming the reason', async () => {
    const answer = await soap12(`<?xml version="1.0"?><!DOCTYPE x>${soapEnvelope('1.2', renameCall('a'))}`);
    expect(answer.status).toBe(500);
    expect(answer.body).toContain('DTD is prohibited in this XML document.');
  });

  it('nesting 10,000 elements deep is refused', async () => {
    const deep = '<a>'.repeat(10_000) + '</a>'.repeat(10_000);
    const answer = await soap11('FolderRename', soapEnvelope('1.1', renameCall(deep)));
    expect(answer.status).toBe(400);
    await expectServerUp();
  });

  it('100,000 elements are refused', async () => {
    const wide = '<x/>'.repeat(100_000);
    const answer = await soap11('FolderRename', soapEnvelope('1.1', renameCall(wide)));
    expect(answer.status).toBe(400);
  });
});

describe('bodies over the limit', () => {
  function postHuge(path: string, headers: Record<string, string>, total: number, declareLength: boolean): Promise<{ status: number; body: string }> {
    const url = new URL(path, app.url);
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: declareLength ? { ...headers, 'Content-Length': String(total) } : headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
      let answered = false;
      req.on('response', () => (answered = true));
      req.on('error', (error) => {
        if (!answered) reject(error);
      });
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      let sent = 0;
      const pump = () => {
        while (sent < total && !answered && !req.destroyed) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
  }

  it('a 100 MB SOAP body declared in Content-Length is refused before it is read', async () => {
    const answer = await postHuge('/FileService.asmx', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/FileAdd"' }, 100 * 1024 * 1024, true);
    expect(answer.status).toBe(500);
    expect(answer.body).toContain('Maximum request length exceeded.');
    await expectServerUp();
  });

  it('a 100 MB chunked SOAP body is cut off at the limit', async () => {
    const answer = await postHuge('/FileService.asmx', { 'Content-Type': 'application/soap+xml; charset=utf-8' }, 100 * 1024 * 1024, false);
    expect(answer.status).toBe(500);
    expect(answer.body).toContain('Maximum request length exceeded.');
    await expectServerUp();
  });

  it('a client that goes on sending and reads late still gets the answer, not a reset', async () => {
    const { port } = new URL(app.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const ended = new Promise<string>((resolve, reject) => {
      socket.once('close', () => resolve(Buffer.concat(received).toString('latin1')));
      socket.once('error', reject);
    });
    socket.pause(); // the answer waits unread while the body goes on: a busy client's stack
    socket.write(`POST /FileService.asmx/FileAdd HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 10; i++) {
      socket.write(chunk);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    socket.resume();
    socket.end();
    const text = await ended;
    expect(text).toMatch(/^HTTP\/1\.1 500 /);
    expect(text).toContain('Maximum request length exceeded.');
  });

  it('a 100 MB HTTP POST form is refused with a plain-text error', async () => {
    const answer = await postHuge('/FileService.asmx/FileAdd', { 'Content-Type': 'application/x-www-form-urlencoded' }, 100 * 1024 * 1024, true);
    expect(answer.status).toBe(500);
    expect(answer.body).toBe('Maximum request length exceeded.\n');
    await expectServerUp();
  });
});

describe('text that is not what it claims', () => {
  it('SOAP bytes that are not UTF-8 are refused with 400, not replaced', async () => {
    const body = Buffer.concat([Buffer.from(soapEnvelope('1.1', renameCall('X')).split('X')[0]), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(soapEnvelope('1.1', renameCall('X')).split('X')[1])]);
    const answer = await soap11('FolderRename', body);
    expect(answer.status).toBe(400);
  });

  it('a query string whose octets are not UTF-8 is refused with a plain-text error', async () => {
    const answer = await send(app.url, 'GET', '/OAuthService.asmx/Login?uid=%FF%FE&pwd=x', {});
    expect(answer.status).toBe(500);
    expect(answer.body).toBe('The request is not valid UTF-8.\n');
  });

  it('a form body whose octets are not UTF-8 is refused with a plain-text error', async () => {
    const answer = await send(app.url, 'POST', '/OAuthService.asmx/Login', { 'Content-Type': 'application/x-www-form-urlencoded' }, 'uid=%C3&pwd=x');
    expect(answer.body).toBe('The request is not valid UTF-8.\n');
  });

  it('a charset the server does not know is refused with 400', async () => {
    const answer = await send(app.url, 'POST', '/FileService.asmx', { 'Content-Type': 'text/xml; charset=klingon', SOAPAction: '"http://tempuri.org/FolderRename"' }, soapEnvelope('1.1', renameCall('a')));
    expect(answer.status).toBe(400);
  });
});

describe('numbers', () => {
  it('an overflowing long over SOAP 1.2 is a Sender fault, never truncated', async () => {
    const answer = await soap12(soapEnvelope('1.2', renameCall('a').replace('<dirid>1</dirid>', '<dirid>-9223372036854775809</dirid>')));
    expect(answer.status).toBe(500);
    expect(answer.body).toContain('<soap:Value>soap:Sender</soap:Value>');
    expect(answer.body).toContain('Value was either too large or too small for an Int64.');
  });

  it('an overflowing int over HTTP GET is a plain-text error', async () => {
    const answer = await send(app.url, 'GET', '/FileService.asmx/FolderDelete?uid=1&token=t&dirids=1&is_real=99999999999&sign=s', {});
    expect(answer.body).toBe('Cannot convert 99999999999 to System.Int32.\nParameter name: type ---> Value was either too large or too small for an Int32.\n');
  });
});

describe('after all of it', () => {
  it('the server still answers', expectServerUp);
});

describe('body limits follow the operation', () => {
  it('a SOAP call routed by its body is held to its own operation limit, not the largest of the service', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024);
    const answer = await soap12(soapEnvelope('1.2', renameCall(big)));
    expect(answer.status).toBe(500);
    expect(answer.body).toContain('Maximum request length exceeded.');
  });

  it('ShareImageUpload routed by its body may carry more than the default 1 MiB', async () => {
    const image = Buffer.alloc(3 * 1024 * 1024, 1).toString('base64');
    const call = `<ShareImageUpload xmlns="http://tempuri.org/"><uid>1001</uid><token>t</token><fid>1</fid><ImagefileName>a.png</ImagefileName><byteFileStream>${image}</byteFileStream></ShareImageUpload>`;
    const answer = await soap12(soapEnvelope('1.2', call));
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('ERROR 401');
  });
});
