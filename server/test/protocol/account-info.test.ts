/** GetAccountInfo (ext): the caller's name, bytes used and quota, in every form. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findOperation } from '../../src/catalog/operations';
import { addAccount, callSigned, element, logIn, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { FORMS, callInForm, resultXml } from '../helpers/requests';
import { insertTestFile, sha256Of, storeTestContent } from '../helpers/stored-files';

const GetAccountInfo = findOperation('UserService', 'GetAccountInfo')!;
let app: TestApp;
let alice: Session;

beforeAll(async () => {
  app = await startTestApp();
  const id = await addAccount(app, 'Alice', 'alice-password-1');
  await app.app.services.db.updateTable('accounts').set({ quota_bytes: 5_000_000 }).where('id', '=', id).execute();
  alice = await logIn(app, 'post', 'alice', 'alice-password-1');
});
afterAll(() => app.close());

async function accountOf(form: (typeof FORMS)[number]) {
  return element(resultXml(await callSigned(app, form, GetAccountInfo, alice, {}), GetAccountInfo), 'account')?.attrs;
}

it.each(FORMS)('answers the name as registered, the bytes used and the quota over %s', async (form) => {
  expect(await accountOf(form)).toEqual({ name: 'Alice', used: '0', quota: '5000000' });
});

it('counts a file of the account in the bytes used', async () => {
  const bytes = 'x'.repeat(1234);
  const content = await storeTestContent(app.app.services, bytes);
  await insertTestFile(app.app.services, { accountId: alice.uid, name: 'a.txt', contentId: content.contentId, sha256: sha256Of(bytes), size: 1234 });
  await app.app.services.db.updateTable('accounts').set({ used_bytes: 1234 }).where('id', '=', alice.uid).execute();
  expect((await accountOf('post'))?.used).toBe('1234');
});

it('refuses a call with a wrong signature (403)', async () => {
  const answer = await callInForm(app.url, 'post', GetAccountInfo, { uid: alice.uid, token: alice.token, sign: 'bad' });
  expect(element(resultXml(answer, GetAccountInfo), 'result')?.attrs.code).toBe('403');
});
