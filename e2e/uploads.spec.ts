/**
 * Uploads and downloads in the browser against the real service: the hidden picker (what the
 * toolbar's Upload button opens), a folder picker, drag and drop, a 50 MB file with visible
 * progress that downloads back byte for byte, a big file whose bytes go before its hash is known
 * (and whose transfer stops once the hash shows the account has the content), a file changed
 * while it was sent, and an upload resumed after a page reload. Each test works in a folder of its own.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page, type Request, type Route } from '@playwright/test';
import { createApi } from '../src/api/client';
import { createSessionStore, memoryStorage, type Session } from '../src/api/session';
import { createTransport } from '../src/api/transport';
import { E2E_ACCOUNT, E2E_PASSWORD } from './service';

const MiB = 1024 * 1024;
const CHUNK = 8 * MiB;

let dir: string;
test.beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fss-e2e-uploads-'));
});
test.afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function writeRandomFile(name: string, size: number): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, randomBytes(size));
  return file;
}

/** Logs in through the login page; answers the session the app stored. */
async function logIn(page: Page): Promise<Session> {
  await page.goto('/login');
  await page.getByLabel(/Account name or ID|账号名或 ID/).fill(E2E_ACCOUNT);
  await page.getByLabel(/^(Password|密码)$/).fill(E2E_PASSWORD);
  await page.getByLabel(/^(Password|密码)$/).press('Enter');
  await expect(page.getByTestId('account-name')).toHaveText(E2E_ACCOUNT);
  const stored = await page.evaluate(() => sessionStorage.getItem('fss.session') ?? localStorage.getItem('fss.session'));
  return JSON.parse(stored ?? 'null') as Session;
}

/** The typed client, in node, on the browser's session: to set up folders and to check results. */
function apiFor(session: Session) {
  const sessions = createSessionStore({ session: memoryStorage(), local: memoryStorage() });
  sessions.set(session);
  return createApi(createTransport({ baseUrl: process.env.FSS_E2E_BASE_URL, session: sessions }));
}

/** Logs in and opens a new folder of its own; answers the API client and the folder id. */
async function openNewFolder(page: Page, name: string) {
  const session = await logIn(page);
  const api = apiFor(session);
  const folder = await api.folderAdd({ dirid: 0, name: `${name} ${Date.now()}` });
  await page.goto(`/folder/${folder.id}`);
  return { api, folderId: folder.id };
}

/** Limits the page's upload rate (CDP network emulation), as a slower line would; -1: no limit. */
async function limitUpload(page: Page, bytesPerSecond: number) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond });
}

/** Every request of the page to /upload/ and to FileAdd, in the order sent: `POST`, `PATCH <offset>`, `DELETE`, `FileAdd`… */
function recordUploadRequests(page: Page): string[] {
  const sent: string[] = [];
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith('/upload')) sent.push(`${request.method()} ${request.headers()['upload-offset'] ?? ''}`.trim());
    else if (pathname.endsWith('/FileAdd')) sent.push('FileAdd');
  });
  return sent;
}

const panel = (page: Page) => page.getByTestId('upload-panel');
const item = (page: Page, name: string) => panel(page).getByTestId('upload-item').filter({ hasText: name });

/** Waits until every upload is done with none failed: the panel folds into a chip (docs/web-app.md); Show unfolds it, rows and all. */
async function unfoldWhenDone(page: Page, timeout = 10_000) {
  await expect(panel(page)).toHaveAttribute('data-folded', 'true', { timeout });
  await panel(page).getByRole('button', { name: 'Show uploads' }).click();
}

test.describe('uploads and downloads', () => {
  test('upload by the Upload button: the file is added to the folder; the same content again is added without a transfer', async ({ page }) => {
    const { api, folderId } = await openNewFolder(page, 'button');
    const file = await writeRandomFile('notes.txt', 200 * 1024);

    // The toolbar's button opens the picker (useUploads().pickFiles) for this folder.
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('main').getByRole('button', { name: 'Upload', exact: true }).click();
    await (await chooser).setFiles(file);
    await unfoldWhenDone(page);
    await expect(item(page, 'notes.txt')).toHaveAttribute('data-state', 'done');
    await expect(item(page, 'notes.txt')).toContainText('Uploaded');
    // The listing is refreshed with the new file.
    await expect(page.getByRole('main').getByText('notes.txt', { exact: true })).toBeVisible();

    // The same bytes again (the hidden picker input filled directly): FileAdd with the hash
    // succeeds at once, and nothing goes to /upload/.
    const uploads: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/upload')) uploads.push(request.method());
    });
    await page.getByTestId('upload-files-input').setInputFiles(file);
    // The name is taken now: the app asks (e2e/name-conflicts.spec.ts); Keep both numbers the new one.
    await page.getByRole('alertdialog', { name: '“notes.txt” already exists here' }).getByRole('button', { name: 'Keep both' }).click();
    await unfoldWhenDone(page);
    await expect(panel(page).getByTestId('upload-item').nth(1)).toHaveAttribute('data-state', 'done');
    await expect(panel(page).getByTestId('upload-item').nth(1)).toContainText('Already stored');
    expect(uploads).toEqual([]);

    const listing = await api.getFiles({ dir: String(folderId), order: 'name', desc: '0' });
    expect(listing.files.map((f) => f.name)).toEqual(['notes (1).txt', 'notes.txt']);
    expect(listing.files[0].hash).toBe(sha256(await readFile(file)));

    // The panel is accessible and fits a 360 px screen.
    const scan = await new AxeBuilder({ page }).include('[data-testid="upload-panel"]').analyze();
    expect(scan.violations).toEqual([]);
    await page.setViewportSize({ width: 360, height: 740 });
    const box = await panel(page).boundingBox();
    expect(box!.width).toBeLessThanOrEqual(360);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
  });

  test('upload a folder by the folder picker: its tree is recreated and its files go into it', async ({ page }) => {
    const { api, folderId } = await openNewFolder(page, 'folder picker');
    const tree = path.join(dir, 'Album');
    await mkdir(path.join(tree, '2024'), { recursive: true });
    await writeFile(path.join(tree, 'cover.txt'), 'cover');
    await writeFile(path.join(tree, '2024', 'january.txt'), 'january');

    await page.getByTestId('upload-folder-input').setInputFiles(tree);
    // All done without a failure: the panel folds into a chip, which the list's status line stands above; Show unfolds it.
    await expect(panel(page)).toHaveAttribute('data-folded', 'true');
    await expect(panel(page).getByRole('heading', { name: '2 files uploaded' })).toBeVisible();
    await expect(item(page, 'Album/2024/january.txt')).toBeHidden();
    const status = page.getByRole('main').getByText('1 folder, 0 files');
    await expect(status).toBeVisible();
    expect((await status.boundingBox())!.y + (await status.boundingBox())!.height).toBeLessThanOrEqual((await panel(page).boundingBox())!.y);
    await panel(page).getByRole('button', { name: 'Show uploads' }).click();
    await expect(panel(page)).not.toHaveAttribute('data-folded');
    await expect(panel(page).getByTestId('upload-item').and(page.locator('[data-state="done"]'))).toHaveCount(2);
    await expect(item(page, 'Album/2024/january.txt')).toBeVisible();

    const top = await api.getFiles({ dir: String(folderId), order: 'name', desc: '0' });
    const album = top.folders.find((f) => f.name === 'Album')!;
    const inAlbum = await api.getFiles({ dir: String(album.id), order: 'name', desc: '0' });
    expect(inAlbum.folders.map((f) => f.name)).toEqual(['2024']);
    expect(inAlbum.files.map((f) => f.name)).toEqual(['cover.txt']);
    const in2024 = await api.getFiles({ dir: String(inAlbum.folders[0].id), order: 'name', desc: '0' });
    expect(in2024.files.map((f) => f.name)).toEqual(['january.txt']);
  });

  test('upload by drag and drop onto the page: the drop zone shows, and the dropped files go into the current folder', async ({ page }) => {
    const { api, folderId } = await openNewFolder(page, 'drop');
    const inbox = await api.folderAdd({ dirid: folderId, name: 'Inbox' });
    await page.reload();

    const main = page.getByRole('main');
    const dataTransfer = await page.evaluateHandle(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['dropped one'], 'dropped-1.txt', { type: 'text/plain' }));
      transfer.items.add(new File([new Uint8Array(300 * 1024).fill(7)], 'dropped-2.bin'));
      return transfer;
    });
    await main.dispatchEvent('dragenter', { dataTransfer });
    await main.dispatchEvent('dragover', { dataTransfer });
    await expect(page.getByText('Drop files or folders to upload them into this folder')).toBeVisible();
    await main.dispatchEvent('drop', { dataTransfer });
    await expect(page.getByText('Drop files or folders to upload them into this folder')).toBeHidden();

    await unfoldWhenDone(page);
    await expect(item(page, 'dropped-1.txt')).toHaveAttribute('data-state', 'done');
    await expect(item(page, 'dropped-2.bin')).toHaveAttribute('data-state', 'done');
    const listing = await api.getFiles({ dir: String(folderId), order: 'name', desc: '0' });
    expect(listing.files.map((f) => [f.name, f.size])).toEqual([
      ['dropped-1.txt', 11],
      ['dropped-2.bin', 300 * 1024],
    ]);

    // Dropped onto a folder row, a file goes into that folder (the row takes the drop, the page stands aside).
    const onRow = await page.evaluateHandle(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['for the inbox'], 'into-inbox.txt'));
      return transfer;
    });
    const row = page.getByRole('option', { name: /Inbox/ });
    await row.dispatchEvent('dragover', { dataTransfer: onRow });
    await row.dispatchEvent('drop', { dataTransfer: onRow });
    await unfoldWhenDone(page);
    await expect(item(page, 'into-inbox.txt')).toHaveAttribute('data-state', 'done');
    const inInbox = await api.getFiles({ dir: String(inbox.id), order: 'name', desc: '0' });
    expect(inInbox.files.map((f) => f.name)).toEqual(['into-inbox.txt']);
    const stillHere = await api.getFiles({ dir: String(folderId), order: 'name', desc: '0' });
    expect(stillHere.files.map((f) => f.name)).toEqual(['dropped-1.txt', 'dropped-2.bin']);

    // Dropped onto a file row, or onto the list itself, files go into the current folder: the list
    // leaves a drop it does not take to the page (it used to swallow it, and nothing was uploaded).
    for (const [name, target] of [
      ['on-a-file-row.txt', page.getByRole('option', { name: /dropped-1\.txt/ })],
      ['on-the-list.txt', page.getByRole('listbox')],
    ] as const) {
      const transfer = await page.evaluateHandle((fileName) => {
        const data = new DataTransfer();
        data.items.add(new File(['here'], fileName));
        return data;
      }, name);
      await target.dispatchEvent('dragover', { dataTransfer: transfer });
      await target.dispatchEvent('drop', { dataTransfer: transfer });
      await unfoldWhenDone(page);
      await expect(item(page, name)).toHaveAttribute('data-state', 'done');
    }
    const afterDrops = await api.getFiles({ dir: String(folderId), order: 'name', desc: '0' });
    expect(afterDrops.files.map((f) => f.name)).toEqual(['dropped-1.txt', 'dropped-2.bin', 'on-a-file-row.txt', 'on-the-list.txt']);
  });

  test('a 50 MB file shows its progress as it goes, and downloads back byte for byte', async ({ page }) => {
    test.setTimeout(60_000);
    await openNewFolder(page, 'big');
    const file = await writeRandomFile('big.bin', 50 * MiB);
    // A line of 100 Mbit/s or so, so that the transfer takes a few seconds.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 5, downloadThroughput: -1, uploadThroughput: 15 * MiB });

    // Every value the item's progress bar takes while uploading.
    await page.evaluate(() => {
      const seen: number[] = [];
      (window as unknown as { progressSeen: number[] }).progressSeen = seen;
      new MutationObserver(() => {
        const row = document.querySelector('[data-testid="upload-item"][data-state="uploading"]');
        const value = Number(row?.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow') ?? NaN);
        if (!Number.isNaN(value) && seen[seen.length - 1] !== value) seen.push(value);
      }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-valuenow', 'data-state'] });
    });

    const worker = page.waitForEvent('worker'); // the file is hashed off the main thread
    await page.getByTestId('upload-files-input').setInputFiles(file);
    expect((await worker).url()).toMatch(/hash-worker/);
    const bar = item(page, 'big.bin').getByRole('progressbar', { name: 'big.bin' });
    await expect(item(page, 'big.bin')).toHaveAttribute('data-state', 'uploading', { timeout: 15_000 });
    await expect(item(page, 'big.bin')).toContainText(/MB\/s/);
    await expect(item(page, 'big.bin')).toContainText(/left/);
    await unfoldWhenDone(page, 40_000);
    await expect(item(page, 'big.bin')).toHaveAttribute('data-state', 'done');
    await expect(bar).toHaveAttribute('aria-valuenow', '100');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });

    const seen = await page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen);
    const between = seen.filter((value) => value > 0 && value < 100);
    expect(between.length, `progress values seen: ${seen.join(', ')}`).toBeGreaterThanOrEqual(3);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen); // never goes back
    // The overall bar agrees.
    await expect(panel(page).getByTestId('upload-overall')).toHaveAttribute('aria-valuenow', '100');

    // Download: FileDownload's URL, saved by the browser; the same bytes come back.
    const download = page.waitForEvent('download');
    await item(page, 'big.bin').getByRole('button', { name: 'Download big.bin' }).click();
    const saved = await (await download).path();
    expect((await download).suggestedFilename()).toBe('big.bin');
    expect(sha256(await readFile(saved))).toBe(sha256(await readFile(file)));
  });

  test('a big file: its bytes go before its hash is known; the hash read alongside is checked with FileAdd while it is sent', async ({ page }) => {
    test.setTimeout(60_000);
    const { api, folderId } = await openNewFolder(page, 'send at once');
    const file = await writeRandomFile('at-once.bin', 40 * MiB);
    // A line of 8 MiB/s: the transfer takes about 5 s, hashing well under one.
    await limitUpload(page, 8 * MiB);
    const sent = recordUploadRequests(page);

    await page.getByTestId('upload-files-input').setInputFiles(file);
    await unfoldWhenDone(page, 40_000);
    await expect(item(page, 'at-once.bin')).toHaveAttribute('data-state', 'done');
    await expect(item(page, 'at-once.bin')).toContainText('Uploaded');

    // The first PATCH went before the FileAdd that the hash allowed (sent as soon as it was known),
    // and the transfer went on after it (404: not the account's yet); the last FileAdd adds the file.
    const firstPatch = sent.indexOf('PATCH 0');
    const probe = sent.indexOf('FileAdd');
    expect(sent[0]).toBe('POST');
    expect(firstPatch).toBe(1);
    expect(probe).toBeGreaterThan(firstPatch);
    expect(sent.slice(probe + 1).some((line) => line.startsWith('PATCH'))).toBe(true);
    expect(sent.filter((line) => line === 'FileAdd')).toHaveLength(2);
    expect(sent[sent.length - 1]).toBe('FileAdd');
    const listing = await api.getFiles({ dir: String(folderId), order: 'name', desc: '0' });
    expect(listing.files.map((f) => [f.name, f.size, f.hash])).toEqual([['at-once.bin', 40 * MiB, sha256(await readFile(file))]]);
  });

  test('a big file the account already has: the transfer stops once the hash is known, and its upload is deleted (instant upload)', async ({ page }) => {
    test.setTimeout(60_000);
    const { api, folderId } = await openNewFolder(page, 'instant big');
    const file = await writeRandomFile('owned.iso', 64 * MiB);
    await page.getByTestId('upload-files-input').setInputFiles(file);
    await unfoldWhenDone(page, 30_000);
    await expect(item(page, 'owned.iso')).toHaveAttribute('data-state', 'done');

    // The same file again, on a line of 4 MiB/s: sending all of it would take 16 s.
    await limitUpload(page, 4 * MiB);
    const sent = recordUploadRequests(page);
    const deleted = page.waitForResponse((response) => response.request().method() === 'DELETE' && new URL(response.url()).pathname.startsWith('/upload/'));
    await page.getByTestId('upload-files-input').setInputFiles(file);
    await page.getByRole('alertdialog', { name: '“owned.iso” already exists here' }).getByRole('button', { name: 'Keep both' }).click();
    const again = panel(page).getByTestId('upload-item').nth(1);
    await unfoldWhenDone(page, 15_000);
    await expect(again).toHaveAttribute('data-state', 'done');
    await expect(again).toContainText('Already stored');

    // It started sending at once, then FileAdd with the hash succeeded: the rest was never sent.
    expect(sent.slice(0, 2)).toEqual(['POST', 'PATCH 0']);
    expect(sent.filter((line) => line.startsWith('PATCH')).length).toBeLessThanOrEqual(2);
    expect(sent.filter((line) => line === 'FileAdd')).toHaveLength(1);
    const deletion = await deleted;
    expect(deletion.status()).toBe(204);
    const session = JSON.parse((await page.evaluate(() => sessionStorage.getItem('fss.session') ?? localStorage.getItem('fss.session'))) ?? 'null') as Session;
    const head = await fetch(deletion.url(), { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0', Authorization: `Bearer ${session.token}` } });
    expect(head.status).toBe(404);
    expect(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('fss.upload:')))).toEqual([]);

    const listing = await api.getFiles({ dir: String(folderId), order: 'name', desc: '0' });
    expect(listing.files.map((f) => f.name)).toEqual(['owned (1).iso', 'owned.iso']);
    expect(new Set(listing.files.map((f) => f.hash))).toEqual(new Set([sha256(await readFile(file))]));
  });

  test('a file changed on disk while it is sent fails at once as changed, and nothing is added', async ({ page }) => {
    test.setTimeout(60_000);
    const { api, folderId } = await openNewFolder(page, 'changed');
    const file = await writeRandomFile('draft.bin', 32 * MiB);
    await limitUpload(page, 4 * MiB);
    const sent = recordUploadRequests(page);

    await page.getByTestId('upload-files-input').setInputFiles(file);
    await expect.poll(() => sent.includes('PATCH 0'), { timeout: 10_000 }).toBe(true);
    // The browser refuses to read a file modified since it was picked: the PATCH under way fails.
    await appendFile(file, 'an edit');
    await expect(item(page, 'draft.bin')).toHaveAttribute('data-state', 'error', { timeout: 20_000 });
    await expect(item(page, 'draft.bin')).toContainText('The file changed while it was being uploaded');
    await expect(item(page, 'draft.bin')).not.toContainText(/Trying again/);
    // Its upload held part of the old version: deleted, not offered for resuming.
    await expect.poll(() => sent.includes('DELETE')).toBe(true);
    expect(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('fss.upload:')))).toEqual([]);

    const listing = await api.getFiles({ dir: String(folderId), order: 'name', desc: '0' });
    expect(listing.files).toEqual([]);
  });

  test('an upload interrupted by a page reload resumes from where the server stopped, not from 0', async ({ page }) => {
    test.setTimeout(60_000);
    const { api, folderId } = await openNewFolder(page, 'resume');
    const file = await writeRandomFile('resume.bin', 30 * MiB);

    // The first two chunks go through; the third never arrives (the connection hangs).
    const hanging: Route[] = [];
    await page.route('**/upload/*', async (route, request) => {
      if (request.method() === 'PATCH' && Number(request.headers()['upload-offset']) >= 2 * CHUNK) hanging.push(route);
      else await route.continue();
    });
    await page.getByTestId('upload-files-input').setInputFiles(file);
    await expect.poll(() => hanging.length, { timeout: 20_000 }).toBe(1);
    // Remembered from its creation on (with its hash once known), for a reload to find.
    expect(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('fss.upload:')))).toHaveLength(1);

    // Reload mid-upload (the page asks first: yes, leave). The page remembers the unfinished upload.
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.type());
      void dialog.accept();
    });
    await page.reload();
    expect(asked.length <= 1 && asked.every((type) => type === 'beforeunload')).toBe(true);
    await expect(panel(page).getByRole('heading', { name: 'Unfinished uploads' })).toBeVisible();
    await expect(panel(page).getByText('resume.bin')).toBeVisible();

    // The same file again: HEAD, then PATCH from the offset the server reports (at least the two
    // chunks that arrived; more if part of the third got through before the reload).
    const requests: Request[] = [];
    let serverOffset = -1;
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/upload')) requests.push(request);
    });
    page.on('response', (response) => {
      if (response.request().method() === 'HEAD' && new URL(response.url()).pathname.startsWith('/upload/')) {
        serverOffset = Number(response.headers()['upload-offset']);
      }
    });
    await page.getByTestId('upload-files-input').setInputFiles(file);
    await unfoldWhenDone(page, 30_000);
    await expect(item(page, 'resume.bin')).toHaveAttribute('data-state', 'done');
    await expect(item(page, 'resume.bin')).toContainText('Uploaded');

    const sent = requests.map((request) => `${request.method()} ${request.headers()['upload-offset'] ?? ''}`.trim());
    expect(sent[0]).toBe('HEAD');
    expect(sent.filter((line) => line.startsWith('POST'))).toEqual([]);
    const patches = sent.filter((line) => line.startsWith('PATCH')).map((line) => Number(line.split(' ')[1]));
    expect(serverOffset).toBeGreaterThanOrEqual(2 * CHUNK);
    expect(patches[0]).toBe(serverOffset);
    expect(patches).toEqual(patches.map((_, i) => serverOffset + i * CHUNK));
    await expect(panel(page).getByRole('heading', { name: 'Unfinished uploads' })).toBeHidden();

    const listing = await api.getFiles({ dir: String(folderId), order: 'name', desc: '0' });
    expect(listing.files.map((f) => [f.name, f.size, f.hash])).toEqual([['resume.bin', 30 * MiB, sha256(await readFile(file))]]);
  });
});
