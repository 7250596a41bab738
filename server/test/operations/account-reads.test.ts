/**
 * Reads kept at the account's version (operations/accounts/account-reads.ts, sessions.ts): a call whose
 * token and folder are kept reads one row, and every change to them, by this instance or another
 * on the same database, is seen by the next call (SQLite, or PostgreSQL with the postgres project).
 */
import { onTestFinished, describe, expect, it } from 'vitest';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { findOperation } from '../../src/catalog/operations';
import { KeptReads, type Kept } from '../../src/operations/caches';
import { Lru } from '../../src/lru';
import type { Services, TokenIssued } from '../../src/operations/context';
import { invokeOperation } from '../../src/operations/dispatch';
import { folderEncrypt } from '../../src/operations/encryption/encryption';
import { folderAdd } from '../../src/operations/tree/folders';
import { ResultCode } from '../../src/operations/errors';
import { login } from '../../src/operations/accounts/sessions';
import { folderAndFileDelete } from '../../src/operations/tree/recycle-bin';
import { signRequest } from '../../src/operations/accounts/signing';
import { createAccount } from '../../src/operations/accounts/accounts';
import { hashSecret } from '../../src/operations/accounts/passwords';
import { closeDatabase, openDatabase } from '../../src/storage/db/engine/database';
import { accountVersion } from '../../src/storage/db/engine/hot-queries';
import { callContext, openTestServices, type TestServices } from '../helpers/database';
import { openSession, signed } from '../helpers/encryption';
import { rejected } from '../helpers/refusals';

const GetFiles = findOperation('UserService', 'GetFiles')!;

/** Counts the statements run through a database instance. */
class StatementCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.count++;
    return args.result;
  }
}

interface Setup {
  readonly services: TestServices;
  readonly counter: StatementCounter;
  /** Another instance on the same database: its own connection(s). */
  readonly other: Services;
  readonly issued: TokenIssued;
}

async function setup(): Promise<Setup> {
  const base = await openTestServices();
  const counter = new StatementCounter();
  const services = { ...base, db: base.db.withPlugin(counter) };
  await createAccount(services, { name: 'alice', password: 'alice-password-1' });
  const issued = (await login(callContext(services), { uid: 'alice', pwd: 'alice-password-1' })) as TokenIssued;
  const otherDb = await openDatabase(services.config);
  onTestFinished(() => closeDatabase(otherDb));
  return { services, counter, other: { ...services, db: otherDb }, issued };
}

/** A signed GetFiles of `dir`, as the protocol layer hands it to the operations. */
async function getFiles(setup: Setup, dir: number) {
  const text: Record<string, string> = { uid: String(setup.issued.uid), token: setup.issued.token, dir: String(dir), order: 'name', desc: '0' };
  const sign = signRequest(setup.issued.key, 'GetFiles', text);
  const values = { uid: BigInt(setup.issued.uid), token: setup.issued.token, dir: String(dir), order: 'name', desc: '0', sign };
  return invokeOperation(setup.services, { op: GetFiles, values, text: { ...text, sign } }, { clientAddress: '203.0.113.7', baseUrl: 'http://fss.test' });
}

const refusal = async (promise: Promise<unknown>): Promise<number> => (await rejected(promise)).code;

async function aliceFolder(setup: Setup, name: string): Promise<number> {
  const alice = await openSession(setup.services, 'alice', { existing: true });
  return (await folderAdd(alice.ctx, signed(alice, { dirid: 0n, name }))).item.id;
}

describe('a call whose token and folder are kept', () => {
  it('reads one row: the account version', async () => {
    const s = await setup();
    const folder = await aliceFolder(s, 'Docs');
    await getFiles(s, folder);
    s.counter.count = 0;
    await getFiles(s, folder);
    expect(s.counter.count).toBe(1);
  });

  it('is refused once another instance deleted the token', async () => {
    const s = await setup();
    await getFiles(s, 0);
    await s.other.db.deleteFrom('tokens').where('token_hash', '=', hashSecret(s.issued.token)).execute();
    expect(await refusal(getFiles(s, 0))).toBe(ResultCode.Unauthorized);
  });

  it('answers 404 once another instance moved the folder to the bin', async () => {
    const s = await setup();
    const folder = await aliceFolder(s, 'Docs');
    await getFiles(s, folder);
    const elsewhere = await openSession(s.other, 'alice', { existing: true });
    await folderAndFileDelete(elsewhere.ctx, signed(elsewhere, { dirids: String(folder), fids: '', is_real: 0 }));
    expect(await refusal(getFiles(s, folder))).toBe(ResultCode.NotFound);
  });

  it('answers 423 once another instance encrypted the folder', async () => {
    const s = await setup();
    const folder = await aliceFolder(s, 'Secret');
    await getFiles(s, folder);
    const elsewhere = await openSession(s.other, 'alice', { existing: true });
    await folderEncrypt(elsewhere.ctx, signed(elsewhere, { dirid: BigInt(folder), password: 'a long password', password_tip: 'the usual' }));
    expect(await refusal(getFiles(s, folder))).toBe(ResultCode.Locked);
  });

  it('is accepted past its kept idle expiry when another instance used the token since', async () => {
    const s = await setup();
    await getFiles(s, 0);
    const day = s.services.config.tokenIdleSeconds * 1000;
    s.services.clock.advance(day - 60_000);
    // Another instance's touch: the version does not move, so what is kept here is behind.
    await s.other.db
      .updateTable('tokens')
      .set({ last_seen_at: s.services.now().getTime(), idle_expires_at: s.services.now().getTime() + day })
      .where('token_hash', '=', hashSecret(s.issued.token))
      .execute();
    s.services.clock.advance(120_000);
    await expect(getFiles(s, 0)).resolves.toMatchObject({ kind: 'listing' });
  });
});

describe('the account version', () => {
  const versionOf = (s: Setup) => accountVersion(s.services.db, s.issued.uid);

  it('does not move when a token in use is touched', async () => {
    const s = await setup();
    const before = await versionOf(s);
    s.services.clock.advance(61_000);
    await getFiles(s, 0);
    const row = await s.services.db.selectFrom('tokens').select('last_seen_at').where('token_hash', '=', hashSecret(s.issued.token)).executeTakeFirstOrThrow();
    expect(Number(row.last_seen_at)).toBe(s.services.now().getTime());
    expect(await versionOf(s)).toBe(before);
  });

  it('moves when a token is deleted or its signing key or expiry rewritten', async () => {
    const s = await setup();
    const tokenHash = hashSecret(s.issued.token);
    const steps = [
      () => s.services.db.updateTable('tokens').set({ sealed_signing_key: 'v1.AAAA.AAAA.AAAA' }).where('token_hash', '=', tokenHash).execute(),
      () => s.services.db.updateTable('tokens').set({ expires_at: 1 }).where('token_hash', '=', tokenHash).execute(),
      () => s.services.db.deleteFrom('tokens').where('token_hash', '=', tokenHash).execute(),
    ];
    for (const step of steps) {
      const before = await versionOf(s);
      await step();
      expect(await versionOf(s)).toBeGreaterThan(before);
    }
  });
});

describe('KeptReads', () => {
  const keptReads = <V>() => new KeptReads<V>(new Lru(1000), 'k:');

  it('serves a value only at the version it was kept with, and lets an older one go', () => {
    const reads = keptReads<string>();
    reads.put('a', 5, 'five', 1);
    expect(reads.get('a', 5)).toBe('five');
    expect(reads.get('a', 4)).toBeUndefined();
    expect(reads.peek('a')?.value).toBe('five');
    expect(reads.get('a', 6)).toBeUndefined();
    expect(reads.peek('a')).toBeUndefined();
  });

  it('keeps a later version over an earlier one put after it', () => {
    const reads = keptReads<string>();
    reads.put('a', 7, 'seven', 1);
    reads.put('a', 6, 'six', 1);
    expect(reads.get('a', 7)).toBe('seven');
  });

  it('keeps the values of each kind apart in the shared order', () => {
    const lru = new Lru<string, Kept<unknown>>(1000);
    const [sessions, folders] = [new KeptReads<string>(lru, 's:'), new KeptReads<string>(lru, 'f:')];
    sessions.put('1', 1, 'session', 1);
    folders.put('1', 1, 'folder', 1);
    expect([sessions.get('1', 1), folders.get('1', 1), lru.size]).toEqual(['session', 'folder', 2]);
  });
});
