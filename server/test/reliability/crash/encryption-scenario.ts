/**
 * Kills during folder encryption: the client makes a folder of 24 small files (more than a call
 * encrypts itself, so the background job does it: docs/encryption.md §4), encrypts it with
 * FolderEncrypt, and waits for the job to end, over and over until the kill. After the restart:
 *
 * - the tree is what was acknowledged (FolderEncrypt marks the folder at once, or not at all);
 * - every job ends: the restarted instance takes over the dead one's job once its lease runs out
 *   (FSS_JOB_LEASE_SECONDS=1 here) and goes on with what is left;
 * - then every file beneath an encrypted folder has encrypted content under the folder's key, and
 *   the files of the folder the kill interrupted download, after Unlock, to the exact bytes.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { download, ok, Ops } from './client';
import { waitFor, type Scenario, type ScenarioContext } from './harness';
import { beneath, isLive, keyOf, type Item } from './ledger';
import { TreeClient } from './tree-client';

const PASSWORD = 'folder-password-1';
const FILES_PER_FOLDER = 24;

interface EncryptionState {
  readonly client: TreeClient;
  /** The folder the current round works on. */
  folder: number | null;
  readonly stats: { jobsInterrupted: number; foldersEncrypted: number };
}

const states = new WeakMap<ScenarioContext, EncryptionState>();

function withDb<T>(ctx: ScenarioContext, read: (db: Database.Database) => T): T {
  const db = new Database(path.join(ctx.dataDir, 'fss.sqlite'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return read(db);
  } finally {
    db.close();
  }
}

const unfinishedJobs = (ctx: ScenarioContext) =>
  withDb(ctx, (db) => (db.prepare('select count(*) as n from encryption_jobs where account_id = ? and finished_at is null').get(ctx.account.id) as { n: number }).n);

/** Files of the account beneath an encrypted folder whose content is not encrypted under that folder's key. */
function plaintextInEncryptedFolders(ctx: ScenarioContext): Array<{ id: number; key_id: number | null; folder_key: number }> {
  return withDb(
    ctx,
    (db) =>
      db
        .prepare(
          `select f.id, f.key_id, d.key_id as folder_key from files f join folders d on d.id = f.folder_id join content c on c.id = f.content_id
           where f.account_id = ? and d.key_id is not null and (f.key_id is null or f.key_id <> d.key_id or c.encrypted = 0 or f.encrypted = 0)`,
        )
        .all(ctx.account.id) as Array<{ id: number; key_id: number | null; folder_key: number }>,
  );
}

async function encryptFolder(ctx: ScenarioContext, state: EncryptionState, arm: () => void): Promise<void> {
  const { client } = state;
  const folder = await client.addFolder(0, client.newName('secret'));
  state.folder = folder;
  for (let i = 0; i < FILES_PER_FOLDER; i++) await client.addFile(folder, client.newName('file', 'txt'), ctx.random.pick(client.contents));
  // The kill's delay starts before the call (the kill may cut the call itself: the password's key
  // derivation, the marking) or, more often, at its answer (the background job under way).
  const duringTheCall = ctx.random.chance(0.3);
  if (duringTheCall) arm();
  await client.ledger.change(
    {
      describe: `FolderEncrypt ${folder}`,
      apply: (model) => model.folderEncrypt(folder, PASSWORD, '', folder),
    },
    () => ok(ctx.server.url, Ops.FolderEncrypt, ctx.session, { dirid: folder, password: PASSWORD, password_tip: '' }),
  );
  arm();
  // As a client sees the job: the folder's `progress` in the listing, until it is gone. (Over the
  // wire, so that the kill ends this wait like any call.)
  for (;;) {
    const root = await ok(ctx.server.url, Ops.GetFiles, ctx.session, { dir: '0', order: 'name', desc: '0' });
    if (root.folders.find((f) => Number(f.id) === folder)?.progress === undefined) break;
    await sleep(20);
  }
  state.stats.foldersEncrypted++;
}

export const encryptionScenario: Scenario = {
  name: 'encryptions',
  env: { FSS_JOB_LEASE_SECONDS: '1' },
  armsKill: true,
  minDelayMs: 0,
  maxDelayMs: 300,
  async prepare(ctx) {
    const client = new TreeClient(ctx, { fileEncryption: false });
    states.set(ctx, { client, folder: null, stats: { jobsInterrupted: 0, foldersEncrypted: 0 } });
    await client.uploadOriginals(6);
  },
  async work(ctx, arm) {
    const state = states.get(ctx)!;
    for (;;) await encryptFolder(ctx, state, arm);
  },
  afterKill(ctx) {
    if (unfinishedJobs(ctx) > 0) states.get(ctx)!.stats.jobsInterrupted++;
  },
  async verify(ctx) {
    const state = states.get(ctx)!;
    await state.client.verify();
    await waitFor('the jobs the kill interrupted to end', () => unfinishedJobs(ctx) === 0, 60_000, 50);
    const left = plaintextInEncryptedFolders(ctx);
    if (left.length > 0) throw new Error(`files beneath encrypted folders whose content is not encrypted under the folder's key: ${JSON.stringify(left)}`);
    const folder = state.folder === null ? undefined : state.client.ledger.committed.get(keyOf('folder', state.folder));
    if (folder?.encrypted) {
      // The folder of the interrupted round: every file comes back to the byte, through the key.
      await ok(ctx.server.url, Ops.Unlock, ctx.session, { dirid: folder.id, fid: 0, password: PASSWORD });
      const files = beneath(state.client.ledger.committed, folder.id).filter((item: Item) => item.type === 'file' && isLive(item));
      for (const file of files) {
        const got = await download(ctx.server.url, ctx.session, file.id);
        if (got.status !== 200 || got.sha256 !== file.sha256 || got.size !== file.size) throw new Error(`encrypted file ${file.id} downloads as ${JSON.stringify(got)}, not ${file.size} bytes of ${file.sha256}`);
      }
    }
  },
  async finish(ctx) {
    const { stats } = states.get(ctx)!;
    ctx.log(`folders encrypted to the end: ${stats.foldersEncrypted}; kills that cut a job off (the restarted instance took it over and finished it): ${stats.jobsInterrupted}`);
  },
};
