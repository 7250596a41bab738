/**
 * The real service as the model-based tests call it: signed calls in any of the four forms
 * (helpers/requests.ts builds them), tus uploads, and the items of an answer read back as plain
 * attribute maps. The service runs in-process on a loopback port (helpers/app-server.ts), with a
 * clock the test sets before every call, so that each item's time is known to the second.
 */
import { findOperation, type OperationSpec } from '../../../src/catalog/operations';
import { hashPassword } from '../../../src/operations/accounts/passwords';
import { insertAccount } from '../../../src/storage/db/repositories/accounts-repository';
import { callSigned, element, logIn, type Session, type TestApp } from '../../helpers/app-server';
import { resultXml, send, type Form, type Value } from '../../helpers/requests';

export type Attrs = Record<string, string>;

/** One answer: its result attributes and, for listings and items, the items in the order written. */
export interface Answer {
  readonly op: string;
  readonly form: Form;
  readonly code: number;
  readonly msg: string;
  readonly result: Attrs;
  readonly items: ReadonlyArray<{ readonly type: 'folder' | 'file'; readonly attrs: Attrs }>;
  /** GetFilesWhitPath: the `<path value>` and its `<dir>` elements. */
  readonly path?: { readonly value: string; readonly dirs: Attrs[] };
  readonly raw: string;
}

const decodeXml = (text: string) =>
  text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, entity: string) => {
    if (entity[0] === '#') return String.fromCodePoint(entity[1] === 'x' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[entity]!;
  });

function attributesOf(text: string): Attrs {
  const attrs: Attrs = {};
  for (const match of text.matchAll(/([\w:]+)="([^"]*)"/g)) attrs[match[1]] = decodeXml(match[2]);
  return attrs;
}

export function readAnswer(op: OperationSpec, form: Form, status: number, body: string): Answer {
  const xml = resultXml({ status, body, contentType: '', headers: {} }, op);
  const result = element(xml, 'result');
  if (!result) throw new Error(`${op.name} over ${form}: no <result> in the answer (HTTP ${status}):\n${body}`);
  const items = [...xml.matchAll(/<(folder|file)\s([^>]*?)\/>/g)].map((m) => ({ type: m[1] as 'folder' | 'file', attrs: attributesOf(m[2]) }));
  const pathMatch = /<path\s+value="([^"]*)"\s*>([\s\S]*?)<\/path>/.exec(xml);
  const path = pathMatch
    ? { value: decodeXml(pathMatch[1]), dirs: [...pathMatch[2].matchAll(/<dir\s([^>]*?)\/>/g)].map((m) => attributesOf(m[1])) }
    : undefined;
  return { op: op.name, form, code: Number(result.attrs.code), msg: result.attrs.msg ?? '', result: result.attrs, items, path, raw: xml };
}

function operation(name: string): OperationSpec {
  const op = findOperation('FileService', name) ?? findOperation('UserService', name) ?? findOperation('OAuthService', name);
  if (!op) throw new Error(`no operation ${name}`);
  return op;
}

/** A cheap password hash (its cost travels in the string), so that each sequence can have an account of its own. */
const CHEAP_SCRYPT = { N: 2 ** 10, r: 8, p: 1 };

export class ServiceClient {
  private constructor(
    readonly app: TestApp,
    readonly accountName: string,
    private readonly password: string,
    public session: Session,
  ) {}

  /** A new account, logged in over HTTP POST. */
  static async forNewAccount(app: TestApp, name: string): Promise<ServiceClient> {
    const password = `${name}-password`;
    const { services } = app.app;
    await insertAccount(services.db, {
      name,
      nameKey: name.toLowerCase(),
      passwordHash: await hashPassword(services.passwordHashes, password, CHEAP_SCRYPT),
      quotaBytes: 10 * 1024 ** 3,
      createdAt: services.now(),
    });
    return new ServiceClient(app, name, password, await logIn(app, 'post', name, password));
  }

  async call(form: Form, opName: string, params: Record<string, Value>): Promise<Answer> {
    const op = operation(opName);
    const answer = await callSigned(this.app, form, op, this.session, params);
    const incident = /incident ([0-9a-f]+)/.exec(answer.body)?.[1];
    if (incident) {
      const logged = this.app.logLines.filter((line) => line.includes(incident)).join('\n');
      throw new Error(`${op.name} over ${form} with ${JSON.stringify(params)}: a fault inside the service:\n${logged || answer.body}`);
    }
    return readAnswer(op, form, answer.status, answer.body);
  }

  /** Logout, then a new Login: a new token, with nothing unlocked. */
  async relogin(form: Form): Promise<void> {
    const out = await this.call(form, 'Logout', {});
    if (out.code !== 0) throw new Error(`Logout refused: ${out.raw}`);
    this.session = await logIn(this.app, form, this.accountName, this.password);
  }

  /** A whole tus upload in one PATCH; returns the SHA-256 the service computed. */
  async upload(bytes: Buffer): Promise<string> {
    const auth = { 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${this.session.token}` };
    const created = await send(this.app.url, 'POST', '/upload/', { ...auth, 'Upload-Length': String(bytes.length) });
    if (created.status !== 201) throw new Error(`upload creation answered ${created.status}: ${created.body}`);
    const location = new URL(String(created.headers.location), this.app.url).pathname;
    const patched = await send(this.app.url, 'PATCH', location, { ...auth, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }, bytes);
    if (patched.status !== 204) throw new Error(`upload PATCH answered ${patched.status}: ${patched.body}`);
    return String(patched.headers['upload-sha256']);
  }

  /** Waits until no encryption job of the service is unfinished (files added or moved into encrypted folders). */
  async settleEncryptionJobs(): Promise<void> {
    const { db } = this.app.app.services;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const open = await db.selectFrom('encryption_jobs').select('id').where('finished_at', 'is', null).executeTakeFirst();
      if (!open) return;
      if (Date.now() > deadline) throw new Error(`encryption job ${open.id} still unfinished after 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** The account's used bytes: not on the wire (fss user list shows them), read from its row. */
  async usedBytes(): Promise<number> {
    const row = await this.app.app.services.db
      .selectFrom('accounts')
      .select('used_bytes')
      .where('id', '=', this.session.uid)
      .executeTakeFirstOrThrow();
    return Number(row.used_bytes);
  }
}
