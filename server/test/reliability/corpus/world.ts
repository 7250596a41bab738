/**
 * The world both reliability suites attack: two accounts on the real service, each with a tree, and
 * the caller's account holding every kind of item an id can name — live, shared, linked, in the
 * bin, encrypted (locked for the caller's session: it was encrypted by another session of the
 * same account). `stateOf` is what must not change: every row an account owns.
 */
import { randomBytes } from 'node:crypto';
import { findOperation, type OperationName, type ServiceName } from '../../../src/catalog/operations';
import type { Services } from '../../../src/operations/context';
import { addFileRecord } from '../../../src/operations/tree/file-records';
import { extensionOf } from '../../../src/operations/tree/names';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../../helpers/app-server';
import { resultXml, type Value } from '../../helpers/requests';
import { sha256Of, storeTestContent } from '../../helpers/stored-files';

export interface World {
  readonly app: TestApp;
  /** The caller: a session of alice that has never unlocked anything. */
  readonly alice: Session;
  /** Another session of alice, which built her tree and encrypted her items. */
  readonly owner: Session;
  /** Another account, whose items the caller must never reach. */
  readonly bob: Session;
  readonly alices: {
    readonly folder: number; // Docs: live
    readonly file: number; // Docs/notes.txt: live
    readonly rootFile: number; // readme.txt: live, with a direct link
    readonly sharedFolder: number; // Public: shared, open
    readonly sharedFile: number; // Public/inside.txt
    readonly lockedFolder: number; // Vault: encrypted folder
    readonly lockedFile: number; // Vault/secret.txt: beneath it
    readonly encryptedFile: number; // diary.txt: encrypted file
    readonly binnedFolder: number; // Old: in the bin
    readonly fileInBinnedFolder: number; // Old/old.txt
    readonly binnedFile: number; // trash.txt: in the bin
    /** The code of Public's share (open: no extraction code). */
    readonly shareCode: string;
  };
  readonly bobs: {
    readonly folder: number; // Private
    readonly file: number; // Private/seed.txt
    readonly rootFile: number; // bob.txt
  };
}

/** An id no item has. */
export const MISSING_ID = 987_654_321;

const op = (service: ServiceName, name: OperationName) => findOperation(service, name)!;

/** A signed call over HTTP POST that must succeed; its result document. */
export async function callOk(world: Pick<World, 'app'>, session: Session, service: ServiceName, name: OperationName, params: Record<string, Value>): Promise<string> {
  const operation = op(service, name);
  const answer = await callSigned(world.app, 'post', operation, session, params);
  const xml = resultXml(answer, operation);
  const result = element(xml, 'result');
  if (result?.attrs.code !== '0') throw new Error(`${name} refused while building the world: ${answer.body}`);
  return xml;
}

export async function addFolder(world: Pick<World, 'app'>, session: Session, parent: number, name: string): Promise<number> {
  const xml = await callOk(world, session, 'FileService', 'FolderAdd', { dirid: parent, name });
  return Number(element(xml, 'folder')!.attrs.id);
}

/** A file with real bytes in the content store (encryption reads them), recorded as FileAdd records it. */
export async function addStoredFile(services: Services, accountId: number, folderId: number, name: string): Promise<number> {
  const bytes = Buffer.from(`${name} of account ${accountId}: ${randomBytes(8).toString('hex')}`);
  const content = await storeTestContent(services, bytes);
  const item = await services.db
    .transaction()
    .execute((tx) =>
      addFileRecord(tx, services, accountId, { name, ext: extensionOf(name), size: bytes.length, folderId, sha256: sha256Of(bytes), claimContent: async () => ({ contentId: content.contentId, keyId: null }) }),
    );
  return item.id;
}

/** The public address of the world's service: share e-mails are sent only with one (docs/protocol.md §16). */
export const WORLD_PUBLIC_URL = 'https://files.example.com';

export async function buildWorld(): Promise<World> {
  const app = await startTestApp({ FSS_PUBLIC_URL: WORLD_PUBLIC_URL });
  const { services } = app.app;
  await addAccount(app, 'alice', 'alice-password-1');
  await addAccount(app, 'bob', 'bob-password-1');
  const owner = await logIn(app, 'post', 'alice', 'alice-password-1');
  const alice = await logIn(app, 'post', 'alice', 'alice-password-1');
  const bob = await logIn(app, 'post', 'bob', 'bob-password-1');
  const w = { app };

  const docs = await addFolder(w, owner, 0, 'Docs');
  const notes = await addStoredFile(services, owner.uid, docs, 'notes.txt');
  const readme = await addStoredFile(services, owner.uid, 0, 'readme.txt');
  await callOk(w, owner, 'FileService', 'FileLink', { fid: readme });

  const pub = await addFolder(w, owner, 0, 'Public');
  const inside = await addStoredFile(services, owner.uid, pub, 'inside.txt');
  const shared = await callOk(w, owner, 'FileService', 'FolderShare', { dirids: String(pub), downpwd: '', downValue: 0, description: 'open share' });
  const shareCode = element(shared, 'folder')!.attrs.code;

  const vault = await addFolder(w, owner, 0, 'Vault');
  const secret = await addStoredFile(services, owner.uid, vault, 'secret.txt');
  await callOk(w, owner, 'FileService', 'FolderEncrypt', { dirid: vault, password: 'vault-pass', password_tip: 'vault hint' });
  const diary = await addStoredFile(services, owner.uid, 0, 'diary.txt');
  await callOk(w, owner, 'FileService', 'FileEncrypt', { fid: diary, password: 'diary-pass', password_tip: 'diary hint' });

  const old = await addFolder(w, owner, 0, 'Old');
  const oldFile = await addStoredFile(services, owner.uid, old, 'old.txt');
  const trash = await addStoredFile(services, owner.uid, 0, 'trash.txt');
  await callOk(w, owner, 'FileService', 'FolderAndFileDelete', { dirids: String(old), fids: String(trash), is_real: 0 });

  const priv = await addFolder(w, bob, 0, 'Private');
  const seed = await addStoredFile(services, bob.uid, priv, 'seed.txt');
  const bobFile = await addStoredFile(services, bob.uid, 0, 'bob.txt');

  return {
    app,
    alice,
    owner,
    bob,
    alices: {
      folder: docs,
      file: notes,
      rootFile: readme,
      sharedFolder: pub,
      sharedFile: inside,
      lockedFolder: vault,
      lockedFile: secret,
      encryptedFile: diary,
      binnedFolder: old,
      fileInBinnedFolder: oldFile,
      binnedFile: trash,
      shareCode,
    },
    bobs: { folder: priv, file: seed, rootFile: bobFile },
  };
}

/**
 * Every row an account owns that a call could change: its tree (live and in the bin), shares with
 * their e-mails, links, encryption keys, and its used bytes. Counters that reads move on purpose
 * (a share's downloads, a link's hits) are part of it too: no attack may move them.
 */
export async function stateOf(services: Services, accountId: number) {
  const { db } = services;
  const shares = await db.selectFrom('shares').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  return {
    account: await db.selectFrom('accounts').select(['id', 'name', 'password_hash', 'quota_bytes', 'used_bytes']).where('id', '=', accountId).executeTakeFirstOrThrow(),
    folders: await db.selectFrom('folders').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    files: await db.selectFrom('files').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    shares,
    emails: shares.length === 0 ? [] : await db.selectFrom('emails').selectAll().where('share_id', 'in', shares.map((s) => s.id)).orderBy('id').execute(),
    links: await db.selectFrom('links').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    keys: await db.selectFrom('encryption_keys').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
  };
}

/** Both accounts' state: what every case compares before and after. */
export async function worldState(world: World) {
  const { services } = world.app.app;
  return { alice: await stateOf(services, world.alice.uid), bob: await stateOf(services, world.bob.uid) };
}
