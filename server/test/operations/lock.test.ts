/**
 * Lock (ext, docs/protocol.md §14): an unlocked encrypted folder or file is locked again for the calling session only, by
 * forgetting that session's unlock of the key that locks it; locking what is locked changes nothing; another account's
 * or a missing item 404, a plaintext one 409 `not-encrypted`.
 */
import { describe, expect, it } from 'vitest';
import { fileDownload, openGrantedFile, verifyDownloadToken } from '../../src/operations/content/downloads';
import { fileEncrypt, folderEncrypt, lock, lockedItemFor, unlock } from '../../src/operations/encryption/encryption';
import { folderAdd } from '../../src/operations/tree/folders';
import { openTestServices } from '../helpers/database';
import { openSession, signed, storeFile, type TestSession } from '../helpers/encryption';
import { rejected } from '../helpers/refusals';

const PASSWORD = 'open sesame';
const TIP = 'the usual';

type Item = { dirid?: number; fid?: number };
const ids = (item: Item) => ({ dirid: BigInt(item.dirid ?? 0), fid: BigInt(item.fid ?? 0) });
const lockItem = (s: TestSession, item: Item) => lock(s.ctx, signed(s, ids(item)));
const unlockItem = (s: TestSession, item: Item) => unlock(s.ctx, signed(s, { ...ids(item), password: PASSWORD }));

async function setup() {
  const services = await openTestServices();
  const alice = await openSession(services, 'alice');
  const vault = ((await folderAdd(alice.ctx, signed(alice, { dirid: 0n, name: 'Vault' }))).item as { id: number }).id;
  const inside = await storeFile(services, alice, vault, 'inside.txt', 'inside');
  await folderEncrypt(alice.ctx, signed(alice, { dirid: BigInt(vault), password: PASSWORD, password_tip: TIP }));
  const secret = await storeFile(services, alice, 0, 'secret.txt', 'secret');
  await fileEncrypt(alice.ctx, signed(alice, { fid: BigInt(secret.id), password: PASSWORD, password_tip: TIP }));
  return { services, alice, vault, inside: inside.id, secret: secret.id };
}

describe('Lock', () => {
  it('locks an unlocked folder again for this session: it and what is inside answer locked', async () => {
    const { services, alice, vault, inside } = await setup();
    await unlockItem(alice, { dirid: vault });
    expect(await lockedItemFor(services.db, alice.caller, { type: 'file', id: inside })).toBeNull();
    await lockItem(alice, { dirid: vault });
    expect(await lockedItemFor(services.db, alice.caller, { type: 'folder', id: vault })).toEqual({ type: 'folder', id: vault, tip: TIP });
    expect(await lockedItemFor(services.db, alice.caller, { type: 'file', id: inside })).toEqual({ type: 'folder', id: vault, tip: TIP });
  });

  it('locks for the calling session only: another session of the account keeps its unlock', async () => {
    const { services, alice, secret } = await setup();
    const other = await openSession(services, 'alice', { existing: true });
    await unlockItem(alice, { fid: secret });
    await unlockItem(other, { fid: secret });
    await lockItem(alice, { fid: secret });
    expect(await lockedItemFor(services.db, alice.caller, { type: 'file', id: secret })).not.toBeNull();
    expect(await lockedItemFor(services.db, other.caller, { type: 'file', id: secret })).toBeNull();
  });

  it('a file inside an encrypted folder locks with the key that locks it: the folder', async () => {
    const { services, alice, vault, inside } = await setup();
    await unlockItem(alice, { dirid: vault });
    await lockItem(alice, { fid: inside });
    expect(await lockedItemFor(services.db, alice.caller, { type: 'folder', id: vault })).not.toBeNull();
  });

  it('a download URL made while unlocked stops serving once the item is locked', async () => {
    const { services, alice, secret } = await setup();
    await unlockItem(alice, { fid: secret });
    const result = await fileDownload(alice.ctx, signed(alice, { fid: BigInt(secret) }));
    const check = verifyDownloadToken(services.secret, new URL(result.url).pathname.split('/')[2], services.now());
    await lockItem(alice, { fid: secret });
    expect(check.kind === 'valid' && (await openGrantedFile(services, check.grant)).kind).toBe('locked');
  });

  it('locking what is locked answers as a success and changes nothing', async () => {
    const { services, alice, vault, secret } = await setup();
    await expect(lockItem(alice, { dirid: vault })).resolves.toEqual({ kind: 'empty' });
    await expect(lockItem(alice, { fid: secret })).resolves.toEqual({ kind: 'empty' });
    await unlockItem(alice, { fid: secret });
    await lockItem(alice, { fid: secret });
    await lockItem(alice, { fid: secret });
    expect(await services.db.selectFrom('unlocks').selectAll().execute()).toEqual([]);
  });

  it("answers 404 for another account's item or a missing one, 409 not-encrypted for a plaintext one, 400 unless exactly one id", async () => {
    const { services, alice, vault, secret } = await setup();
    const bob = await openSession(services, 'bob');
    await unlockItem(alice, { dirid: vault });
    for (const item of [{ dirid: vault }, { fid: secret }, { fid: 987654 }]) {
      const refusal = await rejected(lockItem(bob, item));
      expect([refusal.code, refusal.reason]).toEqual([404, item.dirid ? 'folder-not-found' : 'file-not-found']);
    }
    expect(await lockedItemFor(services.db, alice.caller, { type: 'folder', id: vault })).toBeNull();
    const plainFolder = ((await folderAdd(alice.ctx, signed(alice, { dirid: 0n, name: 'Plain' }))).item as { id: number }).id;
    const plainFile = await storeFile(services, alice, 0, 'plain.txt', 'plain');
    for (const item of [{ dirid: plainFolder }, { fid: plainFile.id }]) {
      const refusal = await rejected(lockItem(alice, item));
      expect([refusal.code, refusal.reason]).toEqual([409, 'not-encrypted']);
    }
    expect((await rejected(lockItem(alice, {}))).code).toBe(400);
    expect((await rejected(lockItem(alice, { dirid: vault, fid: secret }))).code).toBe(400);
  });
});
