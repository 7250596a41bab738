/**
 * FileAdd through the whole service (DECISIONS.md §6): the bytes go up over tus, the record is
 * added by hash and size; content the account already owns needs no transfer; what goes wrong is
 * refused with the documented code and changes nothing.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setQuota } from '../../src/operations/accounts/accounts';
import { addAccount, callSigned, element, startTestApp, type Session, type TestApp } from '../helpers/app-server';
import { callInForm, FORMS, ops, resultXml, send } from '../helpers/requests';

const { Login, FileAdd, GetFiles, FolderAdd } = ops;

let app: TestApp;
let alice: Session;
let bob: Session;

async function login(name: string, password: string): Promise<Session> {
  const answer = await callInForm(app.url, 'post', Login, { uid: name, pwd: password });
  const token = element(resultXml(answer, Login), 'token')!;
  return { uid: Number(token.attrs.uid), token: token.text, key: token.attrs.key };
}

/** A whole tus upload in one PATCH; answers the Upload-SHA256 the service computed. */
async function upload(session: Session, bytes: Buffer): Promise<string> {
  const created = await send(app.url, 'POST', '/upload/', {
    'Tus-Resumable': '1.0.0',
    'Upload-Length': String(bytes.length),
    Authorization: `Bearer ${session.token}`,
  });
  expect(created.status).toBe(201);
  const location = new URL(String(created.headers.location), app.url).pathname;
  const patched = await send(
    app.url,
    'PATCH',
    location,
    {
      'Tus-Resumable': '1.0.0',
      'Upload-Offset': '0',
      'Content-Type': 'application/offset+octet-stream',
      Authorization: `Bearer ${session.token}`,
    },
    bytes,
  );
  expect(patched.status).toBe(204);
  return String(patched.headers['upload-sha256']);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function resultOf(answer: Awaited<ReturnType<typeof callSigned>>) {
  return element(resultXml(answer, FileAdd), 'result')!.attrs;
}

beforeAll(async () => {
  app = await startTestApp();
  await addAccount(app, 'alice', 'alice-password-1');
  await addAccount(app, 'bob', 'bob-password-1');
  alice = await login('alice', 'alice-password-1');
  bob = await login('bob', 'bob-password-1');
});
afterAll(() => app.close());

describe('FileAdd', () => {
  it('adds the record of a completed upload, with the hash the service computed', async () => {
    const bytes = Buffer.from('the quarterly report\n');
    const hash = await upload(alice, bytes);
    expect(hash).toBe(sha256(bytes));
    const answer = await callSigned(app, 'post', FileAdd, alice, { name: 'report.txt', ext: 'txt', size: bytes.length, dirid: 0, hash });
    expect(resultOf(answer).code).toBe('0');
    const file = element(resultXml(answer, FileAdd), 'file')!.attrs;
    expect(file).toMatchObject({ dir: '0', name: 'report.txt', ext: 'txt', size: String(bytes.length), hash, shared: '0', linked: '0', encrypted: '0' });
  });

  it('adds content the account already owns without a transfer, making the taken name unique', async () => {
    const bytes = Buffer.from('owned once, added twice');
    const hash = await upload(alice, bytes);
    await callSigned(app, 'post', FileAdd, alice, { name: 'copy.txt', ext: 'txt', size: bytes.length, dirid: 0, hash });
    const again = await callSigned(app, 'post', FileAdd, alice, { name: 'copy.txt', ext: 'txt', size: bytes.length, dirid: 0, hash });
    expect(element(resultXml(again, FileAdd), 'file')!.attrs.name).toBe('copy (1).txt');
  });

  it("refuses content the account neither uploaded nor owns, even when another account owns it (404)", async () => {
    const bytes = Buffer.from("bob's secret bytes");
    const hash = await upload(bob, bytes);
    await callSigned(app, 'post', FileAdd, bob, { name: 'secret.txt', ext: 'txt', size: bytes.length, dirid: 0, hash });
    const answer = await callSigned(app, 'post', FileAdd, alice, { name: 'stolen.txt', ext: 'txt', size: bytes.length, dirid: 0, hash });
    expect(resultOf(answer).code).toBe('404');
  });

  it('refuses a size that does not match the upload (404)', async () => {
    const bytes = Buffer.from('size matters');
    const hash = await upload(alice, bytes);
    const answer = await callSigned(app, 'post', FileAdd, alice, { name: 'size.txt', ext: 'txt', size: bytes.length + 1, dirid: 0, hash });
    expect(resultOf(answer).code).toBe('404');
  });

  it('refuses an ext that disagrees with the name (400), and keeps the upload claimable', async () => {
    const bytes = Buffer.from('a photo, supposedly');
    const hash = await upload(alice, bytes);
    const wrong = await callSigned(app, 'post', FileAdd, alice, { name: 'photo.jpg', ext: 'png', size: bytes.length, dirid: 0, hash });
    expect(resultOf(wrong)).toMatchObject({ code: '400' });
    expect(resultOf(wrong).msg).toContain('ext does not agree with name');
    const right = await callSigned(app, 'post', FileAdd, alice, { name: 'photo.jpg', ext: 'jpg', size: bytes.length, dirid: 0, hash });
    expect(resultOf(right).code).toBe('0');
  });

  it("refuses another account's folder as the parent (404)", async () => {
    const folder = await callSigned(app, 'post', FolderAdd, bob, { dirid: 0, name: "bob's folder" });
    const bobFolder = element(resultXml(folder, FolderAdd), 'folder')!.attrs.id;
    const bytes = Buffer.from('into the wrong folder');
    const hash = await upload(alice, bytes);
    const answer = await callSigned(app, 'post', FileAdd, alice, { name: 'x.txt', ext: 'txt', size: bytes.length, dirid: Number(bobFolder), hash });
    expect(resultOf(answer).code).toBe('404');
  });

  it('refuses a file beyond the quota (413) and adds nothing', async () => {
    await addAccount(app, 'carol', 'carol-password-1');
    const carol = await login('carol', 'carol-password-1');
    await setQuota(app.app.services, 'carol', 10);
    const small = Buffer.from('tiny');
    const smallHash = await upload(carol, small);
    expect(resultOf(await callSigned(app, 'post', FileAdd, carol, { name: 'a.txt', ext: 'txt', size: small.length, dirid: 0, hash: smallHash })).code).toBe('0');
    // The second copy is content carol owns (no transfer), but 4 + 4 + 4 > 10 bytes of quota.
    await callSigned(app, 'post', FileAdd, carol, { name: 'b.txt', ext: 'txt', size: small.length, dirid: 0, hash: smallHash });
    const over = await callSigned(app, 'post', FileAdd, carol, { name: 'c.txt', ext: 'txt', size: small.length, dirid: 0, hash: smallHash });
    expect(resultOf(over).code).toBe('413');
    const listing = await callSigned(app, 'post', GetFiles, carol, { dir: '0', order: 'name', desc: '0' });
    expect(element(resultXml(listing, GetFiles), 'result')!.attrs.count).toBe('2');
  });

  it.each(FORMS)('binds and answers over %s', async (form) => {
    const bytes = Buffer.from(`bytes sent for ${form}`);
    const hash = await upload(alice, bytes);
    const answer = await callSigned(app, form, FileAdd, alice, { name: `季度报告 ${form}.docx`, ext: 'docx', size: bytes.length, dirid: 0, hash });
    expect(resultOf(answer).code).toBe('0');
    expect(element(resultXml(answer, FileAdd), 'file')!.attrs).toMatchObject({ name: `季度报告 ${form}.docx`, size: String(bytes.length), hash });
  });
});
