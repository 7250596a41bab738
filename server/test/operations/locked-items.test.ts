/**
 * DECISIONS.md §11: wherever a locked item is reached, the answer is 423 with its id and tip —
 * sharing, e-mail sharing, linking and downloading an encrypted file, or one in an encrypted folder.
 */
import { describe, expect, it } from 'vitest';
import type { Services } from '../../src/operations/context';
import { fileDownload } from '../../src/operations/content/downloads';
import { fileEmailShare } from '../../src/operations/sharing/email-shares';
import { fileEncrypt, folderEncrypt } from '../../src/operations/encryption/encryption';
import { ResultCode } from '../../src/operations/errors';
import { folderAdd } from '../../src/operations/tree/folders';
import { fileLink } from '../../src/operations/sharing/links';
import { fileShare } from '../../src/operations/sharing/shares';
import { openTestServices } from '../helpers/database';
import { openSession, signed, storeFile, type TestSession } from '../helpers/encryption';
import { rejected } from '../helpers/refusals';

const TIP = 'the name of the first cat';
/** FileEmailShare needs FSS_PUBLIC_URL before it looks at the file (email-shares.ts mailLinkBase). */
const SENDS_EMAIL = { publicUrl: 'https://files.example.com' };

/** What a signed call on a file reaches, for each operation that must refuse a locked one. */
const reaching: Array<[string, (s: TestSession, fid: number) => Promise<unknown>]> = [
  ['FileShare', (s, fid) => fileShare(s.ctx, signed(s, { fids: String(fid), downpwd: '', downValue: 0, description: '' }))],
  ['FileEmailShare', (s, fid) => fileEmailShare(s.ctx, signed(s, { fid: BigInt(fid), to: 'friend@example.com' }))],
  ['FileLink', (s, fid) => fileLink(s.ctx, signed(s, { fid: BigInt(fid) }))],
  ['FileDownload', (s, fid) => fileDownload(s.ctx, signed(s, { fid: BigInt(fid) }))],
];

async function encryptedFile(services: Services, alice: TestSession) {
  const file = await storeFile(services, alice, 0, 'diary.txt', 'dear diary');
  await fileEncrypt(alice.ctx, signed(alice, { fid: BigInt(file.id), password: 'open sesame', password_tip: TIP }));
  return file.id;
}

async function fileInEncryptedFolder(services: Services, alice: TestSession) {
  const folder = await folderAdd(alice.ctx, signed(alice, { dirid: 0n, name: 'Private' }));
  const file = await storeFile(services, alice, folder.item.id, 'plan.txt', 'the plan');
  await folderEncrypt(alice.ctx, signed(alice, { dirid: BigInt(folder.item.id), password: 'open sesame', password_tip: TIP }));
  return { folderId: folder.item.id, fileId: file.id };
}

describe('a locked item reached by its owner', () => {
  for (const [name, reach] of reaching) {
    it(`${name} of an encrypted file: 423 with its id and tip`, async () => {
      const services = await openTestServices({ config: SENDS_EMAIL });
      const alice = await openSession(services, 'alice');
      const fid = await encryptedFile(services, alice);
      const refusal = await rejected(reach(alice, fid));
      expect(refusal.code).toBe(ResultCode.Locked);
      expect(refusal.details).toMatchObject({ id: fid, tip: TIP });
    });

    it(`${name} of a file in an encrypted folder: 423 with the folder's id and tip`, async () => {
      const services = await openTestServices({ config: SENDS_EMAIL });
      const alice = await openSession(services, 'alice');
      const { folderId, fileId } = await fileInEncryptedFolder(services, alice);
      const refusal = await rejected(reach(alice, fileId));
      expect(refusal.code).toBe(ResultCode.Locked);
      expect(refusal.details).toMatchObject({ tip: TIP });
      // A download is refused by what locks the file for this session; the others name the folder.
      if (name !== 'FileDownload') expect(refusal.details).toMatchObject({ id: folderId });
    });
  }
});
