/**
 * NamesTaken (docs/protocol.md §10.9) on a real database: the live items of a folder whose names equal given names as the
 * service compares them (NFC, case-insensitive), in one query; another account's folder 404; a bad list 400; a locked
 * folder answers as its listing does (423), an unlocked one like any folder.
 */
import { describe, expect, test } from 'vitest';
import type { Listing, Services } from '../../src/operations/context';
import { folderAndFileDelete } from '../../src/operations/tree/recycle-bin';
import { folderEncrypt, unlock } from '../../src/operations/encryption/encryption';
import { ResultCode } from '../../src/operations/errors';
import { getFiles } from '../../src/operations/tree/listings';
import { NAMES_TAKEN_LIMIT, namesTaken } from '../../src/operations/tree/names-taken';
import { openTestServices } from '../helpers/database';
import { openSession, signed, storeFile } from '../helpers/encryption';
import { rejected } from '../helpers/refusals';
import { addFile, addFolder, as, countingStatements, testAccount } from '../helpers/tree';

const auth = { uid: 0n, token: 'test-token', sign: '' };

async function names(result: Promise<Listing>): Promise<string[]> {
  const value = await result;
  const found: string[] = [];
  for await (const folder of value.folders) found.push(`folder:${folder.name}`);
  for await (const file of value.files) found.push(`file:${file.name}`);
  expect(value.count).toBe(found.length);
  return found;
}

const ask = (services: Services, accountId: number, dirid: number, list: string) =>
  namesTaken(as(services, accountId), { ...auth, dirid: BigInt(dirid), names: list });

describe('NamesTaken', () => {
  test('answers the folders and files whose names match, case-insensitively and after NFC, and nothing else', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const docs = await addFolder(services, alice, 0, 'Docs');
    await addFolder(services, alice, docs.id, 'Photos');
    await addFile(services, alice, docs.id, 'Report.PDF', 3);
    await addFile(services, alice, docs.id, 'Caf\u00e9.txt', 1);
    await addFile(services, alice, docs.id, 'other.txt', 1);
    await addFile(services, alice, 0, 'report.pdf', 1);
    const asked = ['photos', 'report.pdf', 'Cafe\u0301.TXT', 'missing.txt'].join('/');
    expect(await names(ask(services, alice, docs.id, asked))).toEqual(['folder:Photos', 'file:Café.txt', 'file:Report.PDF']);
  });

  test('the root is folder 0; items in the bin are not taken', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const old = await addFile(services, alice, 0, 'old.txt', 1);
    await addFile(services, alice, 0, 'kept.txt', 1);
    await folderAndFileDelete(as(services, alice), { ...auth, dirids: '', fids: String(old.id), is_real: 0 });
    expect(await names(ask(services, alice, 0, 'old.txt/kept.txt'))).toEqual(['file:kept.txt']);
  });

  test('asks the database as often for 1,000 names as for one: no query per name', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    await addFile(services, alice, 0, 'file 7.txt', 1);
    const statements = async (list: string) => {
      const counting = countingStatements(services.db);
      await names(namesTaken(as({ ...services, db: counting.db }, alice), { ...auth, dirid: 0n, names: list }));
      return counting.count();
    };
    const many = Array.from({ length: NAMES_TAKEN_LIMIT }, (_, i) => `file ${i}.txt`).join('/');
    expect(await statements(many)).toBe(await statements('file 7.txt'));
  });

  test("another account's folder, a binned folder and an id no folder has are the same 404", async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const bob = await testAccount(services, 'bob');
    const bobs = await addFolder(services, bob, 0, 'Docs');
    const binned = await addFolder(services, alice, 0, 'Binned');
    await folderAndFileDelete(as(services, alice), { ...auth, dirids: String(binned.id), fids: '', is_real: 0 });
    for (const dirid of [bobs.id, binned.id, 987_654]) {
      expect((await rejected(ask(services, alice, dirid, 'a.txt'))).code).toBe(ResultCode.NotFound);
    }
  });

  test('more than 1,000 names, no name, or an invalid name is 400', async () => {
    const services = await openTestServices();
    const alice = await testAccount(services, 'alice');
    const tooMany = Array.from({ length: NAMES_TAKEN_LIMIT + 1 }, (_, i) => `n${i}`).join('/');
    for (const list of [tooMany, '', '//', 'ok.txt/a\u0000b', 'ok.txt/..', ' spaced.txt']) {
      expect((await rejected(ask(services, alice, 0, list))).code).toBe(ResultCode.InvalidArgument);
    }
  });

  test('a folder locked for the session answers 423 as its listing does; once unlocked it answers like any folder', async () => {
    const services = await openTestServices();
    const alice = await openSession(services, 'alice');
    const vault = (await addFolder(services, alice.uid, 0, 'Vault')).id;
    await storeFile(services, alice, vault, 'plan.txt', 'the plan');
    await folderEncrypt(alice.ctx, signed(alice, { dirid: BigInt(vault), password: 'open sesame', password_tip: '' }));
    const listVault = () => getFiles(alice.ctx, signed(alice, { dir: String(vault), order: 'name', desc: '0' }));
    const askVault = () => namesTaken(alice.ctx, signed(alice, { dirid: BigInt(vault), names: 'PLAN.txt' }));
    expect((await rejected(listVault())).code).toBe(ResultCode.Locked);
    expect((await rejected(askVault())).code).toBe(ResultCode.Locked);
    await unlock(alice.ctx, signed(alice, { dirid: BigInt(vault), fid: 0n, password: 'open sesame' }));
    expect(await names(askVault())).toEqual(['file:plan.txt']);
  });
});
