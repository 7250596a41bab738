/**
 * The peer: the same operation served by the `soap` npm package from the service's own WSDL, as a
 * Node developer would build it: `soap.listen` on a node:http server, a service object whose
 * GetFiles checks the token and the sign and reads the listing with the project's own code (the
 * same authentication, sign check and database query as the service), and returns the result as
 * an object that `soap` serializes (`attributes` for XML attributes, arrays for repeated
 * elements). So the two differ in the protocol layer only: reading the envelope, binding, and
 * writing the answer.
 *
 * `soap` serves SOAP 1.1 and SOAP 1.2 (the latter with forceSoap12Headers, on a second port: the
 * option is per listener) and no HTTP GET or POST.
 *
 * Usage: node --import tsx bench/peer-server.ts <data dir> <UserService.wsdl>
 * Prints "listening on http://127.0.0.1:<soap 1.1 port>" and "soap12 on http://127.0.0.1:<port>".
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import soap from 'soap';
import { findOperation } from '../server/src/catalog/operations';
import { loadConfig } from '../server/src/config';
import type { Item, Listing, OpResult, Services } from '../server/src/operations/context';
import { passwordHashQueue } from '../server/src/operations/crypto/hash-queue';
import { callCaches } from '../server/src/operations/caches';
import { invokeOperation } from '../server/src/operations/dispatch';
import { OpError } from '../server/src/operations/errors';
import { openDatabase } from '../server/src/storage/db/engine/database';
import { loadServerSecret } from '../server/src/storage/secret';

const [dataDir, wsdlFile] = process.argv.slice(2);
if (!dataDir || !wsdlFile) throw new Error('usage: peer-server.ts <data dir> <UserService.wsdl>');

const config = loadConfig({ FSS_DATA_DIR: dataDir });
const db = await openDatabase(config);
const services: Services = { db, config, now: () => new Date(), secret: await loadServerSecret(config), passwordHashes: passwordHashQueue(config), caches: callCaches(config) };
const GetFiles = findOperation('UserService', 'GetFiles')!;

const iso = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

function itemAttributes(item: Item): Record<string, string | number> {
  const common = { id: item.id, dir: item.dir, name: item.name };
  const flags = { time: iso(item.time), shared: item.shared ? 1 : 0, linked: item.linked ? 1 : 0, encrypted: item.encrypted ? 1 : 0 };
  return item.type === 'file' ? { ...common, ext: item.ext, size: item.size, hash: item.hash, ...flags } : { ...common, size: item.size, ...flags };
}

async function all<T>(items: Iterable<T> | AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

type Args = Record<string, unknown>;

/** What `soap` gives the handler: element text (or numbers, for typed elements), absent ones missing. */
function textOf(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

async function getFiles(args: Args): Promise<unknown> {
  const text: Record<string, string> = {};
  for (const p of GetFiles.params) text[p.name] = textOf(args[p.name]);
  const values = {
    uid: /^\d+$/.test(text.uid) ? BigInt(text.uid) : 0n,
    token: args.token === undefined ? null : text.token,
    dir: args.dir === undefined ? null : text.dir,
    order: args.order === undefined ? null : text.order,
    desc: args.desc === undefined ? null : text.desc,
    sign: args.sign === undefined ? null : text.sign,
  };
  let result: OpResult;
  try {
    result = await invokeOperation(services, { op: GetFiles, values, text }, { clientAddress: '127.0.0.1', baseUrl: 'http://127.0.0.1' });
  } catch (error) {
    if (error instanceof OpError) return { GetFilesResult: { result: { attributes: { code: error.code, msg: error.message } } } };
    throw error;
  }
  const listing = result as Listing;
  const folders = await all(listing.folders);
  const files = await all(listing.files);
  return {
    GetFilesResult: {
      result: {
        attributes: { code: 0, msg: '', count: listing.count },
        folder: folders.map((item) => ({ attributes: itemAttributes(item) })),
        file: files.map((item) => ({ attributes: itemAttributes(item) })),
      },
    },
  };
}

const serviceObject = { UserService: { UserServiceSoap: { GetFiles: getFiles }, UserServiceSoap12: { GetFiles: getFiles } } };
const wsdl = readFileSync(wsdlFile, 'utf8');

async function listen(soap12: boolean): Promise<number> {
  const server = http.createServer({ keepAliveTimeout: 15_000 }, (_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve, reject) => {
    soap.listen(server, {
      path: '/UserService.asmx',
      services: serviceObject,
      xml: wsdl,
      forceSoap12Headers: soap12,
      callback: (error: unknown) => (error ? reject(error) : resolve()),
    });
  });
  return (server.address() as AddressInfo).port;
}

const port11 = await listen(false);
const port12 = await listen(true);
process.stdout.write(`soap12 on http://127.0.0.1:${port12}\nlistening on http://127.0.0.1:${port11}\n`);
process.once('SIGTERM', () => process.exit(0));
