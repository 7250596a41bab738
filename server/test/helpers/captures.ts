/**
 * The ASMX captures (shared/design/asmx-captures): exact request and response bytes of a real ASMX
 * stack. Tests replay the requests against our server and compare the answers.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** shared/ sits beside the repository's folder (CI: a clean clone with shared/ beside it). */
export const CAPTURES_DIR = path.resolve(here, '../../../../shared/design/asmx-captures');

export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
}

function splitHead(bytes: Buffer): { head: string; body: Buffer } {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return { head: bytes.toString('latin1'), body: Buffer.alloc(0) };
  return { head: bytes.subarray(0, end).toString('latin1'), body: bytes.subarray(end + 4) };
}

export function loadRequest(name: string): RawRequest {
  const { head, body } = splitHead(readFileSync(path.join(CAPTURES_DIR, `${name}.req`)));
  const [requestLine, ...lines] = head.split('\r\n');
  const [method, target] = requestLine.split(' ');
  const headers = lines.map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1).trim()] as const;
  });
  return { method, path: target, headers, body };
}

export function loadResponse(name: string): RawResponse {
  const { head, body } = splitHead(readFileSync(path.join(CAPTURES_DIR, `${name}.res`)));
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** Sends a request with exactly the capture's method, target, headers and body bytes. */
export function replay(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of request.headers) headers[name] = name.toLowerCase() === 'host' ? url.host : value;
    const req = http.request(
      { host: url.hostname, port: url.port, method: request.method, path: request.path, headers, setHost: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const map = new Map<string, string>();
          for (const [k, v] of Object.entries(res.headers)) map.set(k, Array.isArray(v) ? v.join(', ') : String(v));
          resolve({ status: res.statusCode ?? 0, headers: map, body: Buffer.concat(chunks) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

/** Parameter values ASMX bound, as the capture stubs echoed them: name → text, or null for null="true". */
export function echoedParameters(response: RawResponse): Map<string, string | null> {
  const text = response.body.toString('utf8');
  const echoes = new Map<string, string | null>();
  const pattern = /<echo name="([^"]+)"(?: null="true" \/>|>([\s\S]*?)<\/echo>)/g;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    echoes.set(m[1], m[2] === undefined ? null : unescapeXml(m[2]));
  }
  return echoes;
}

export function unescapeXml(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

export function captureNames(group: string): string[] {
  const index = readFileSync(path.join(CAPTURES_DIR, 'INDEX.tsv'), 'utf8').split('\n').slice(1);
  return index.map((line) => line.split('\t')[0]).filter((name) => name && name.startsWith(group + '/'));
}
