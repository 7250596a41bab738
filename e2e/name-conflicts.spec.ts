/**
 * Name conflicts (issue 22 point 5, docs/web-app.md): an upload or a move that meets a name the folder holds asks
 * Replace (the old item to the recycle bin), Keep both (a numbered name) or Skip, with "Apply to all" for the rest.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { addFile, addFolder, type ApiSession } from './files-api';
import { expect, folderList, test } from './fixtures';

const conflictDialog = (page: Page, name: string) => page.getByRole('alertdialog', { name: `“${name}” already exists here` });
const text = (name: string, content: string) => ({ name, mimeType: 'text/plain', buffer: Buffer.from(content) });

async function namesIn(api: ApiSession, dir: number): Promise<string[]> {
  const listing = await api.api.getFiles({ dir: String(dir), order: 'name', desc: '0' });
  return [...listing.folders, ...listing.files].map((item) => item.name);
}

async function contentOf(api: ApiSession, dir: number, name: string): Promise<string> {
  const listing = await api.api.getFiles({ dir: String(dir), order: 'name', desc: '0' });
  const file = listing.files.find((candidate) => candidate.name === name)!;
  return (await fetch((await api.api.fileDownload({ fid: file.id })).url)).text();
}

const inBin = async (api: ApiSession, id: number) =>
  (await api.api.getRecycleFiles({ order: 'time', desc: '1' })).files.some((file) => file.id === id);

test.describe('name conflicts', () => {
  test('uploading a taken name, Replace: the old file goes to the bin and the new content takes the name', async ({ page, api, workspace }) => {
    const old = await addFile(api, workspace.id, 'notes.txt', 'old notes');
    await page.goto(workspace.url);
    await expect(folderList(page, workspace.name).getByRole('option', { name: /notes\.txt/ })).toBeVisible();
    await page.getByTestId('upload-files-input').setInputFiles(text('notes.txt', 'new notes, longer'));
    const dialog = conflictDialog(page, 'notes.txt');
    await expect(dialog).toContainText('Replace moves it to the recycle bin');
    await dialog.getByRole('button', { name: 'Replace' }).click();
    await expect.poll(() => inBin(api, old)).toBe(true);
    await expect.poll(() => namesIn(api, workspace.id)).toEqual(['notes.txt']);
    expect(await contentOf(api, workspace.id, 'notes.txt')).toBe('new notes, longer');
  });

  test('uploading a taken name, Keep both: the new file gets a numbered name', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'Notes.txt', 'old notes');
    await page.goto(workspace.url);
    await page.getByTestId('upload-files-input').setInputFiles(text('notes.txt', 'new notes'));
    // Keep both has the focus: Enter is the safe answer.
    await expect(conflictDialog(page, 'notes.txt').getByRole('button', { name: 'Keep both' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect.poll(() => namesIn(api, workspace.id)).toEqual(['notes (1).txt', 'Notes.txt']);
    expect(await contentOf(api, workspace.id, 'notes (1).txt')).toBe('new notes');
  });

  test('uploading a taken name, Skip: nothing is sent; the free names of the batch are uploaded', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'notes.txt', 'old notes');
    await page.goto(workspace.url);
    const sent: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/upload')) sent.push(request.headers()['upload-metadata'] ?? request.method());
    });
    await page.getByTestId('upload-files-input').setInputFiles([text('notes.txt', 'new notes'), text('fresh.txt', 'fresh')]);
    await conflictDialog(page, 'notes.txt').getByRole('button', { name: 'Skip' }).click();
    await expect.poll(() => namesIn(api, workspace.id)).toEqual(['fresh.txt', 'notes.txt']);
    expect(await contentOf(api, workspace.id, 'notes.txt')).toBe('old notes');
    expect(sent.some((entry) => entry.includes(Buffer.from('notes.txt').toString('base64')))).toBe(false);
  });

  test('two taken names with Apply to all: one question, both replaced', async ({ page, api, workspace }) => {
    const oldA = await addFile(api, workspace.id, 'a.txt', 'old a');
    const oldB = await addFile(api, workspace.id, 'b.txt', 'old b');
    await page.goto(workspace.url);
    await page.getByTestId('upload-files-input').setInputFiles([text('a.txt', 'new a'), text('b.txt', 'new b')]);
    const dialog = conflictDialog(page, 'a.txt');
    await dialog.getByRole('checkbox', { name: 'Do the same for the other 1 conflict' }).check();
    await dialog.getByRole('button', { name: 'Replace' }).click();
    await expect(page.getByRole('alertdialog')).toBeHidden();
    await expect.poll(async () => (await inBin(api, oldA)) && (await inBin(api, oldB))).toBe(true);
    await expect.poll(() => namesIn(api, workspace.id)).toEqual(['a.txt', 'b.txt']);
    expect([await contentOf(api, workspace.id, 'a.txt'), await contentOf(api, workspace.id, 'b.txt')]).toEqual(['new a', 'new b']);
  });

  test('a folder upload onto a taken folder name asks once for the whole folder; Keep both makes a numbered folder', async ({ page, api, workspace }) => {
    const existing = await addFolder(api, workspace.id, 'Album');
    await addFile(api, existing, 'one.txt', 'old one');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fss-e2e-conflicts-'));
    await mkdir(path.join(dir, 'Album', 'inner'), { recursive: true });
    await writeFile(path.join(dir, 'Album', 'one.txt'), 'new one');
    await writeFile(path.join(dir, 'Album', 'inner', 'two.txt'), 'two');
    await page.goto(workspace.url);
    await page.getByTestId('upload-folder-input').setInputFiles(path.join(dir, 'Album'));
    await conflictDialog(page, 'Album').getByRole('button', { name: 'Keep both' }).click();
    await expect.poll(() => namesIn(api, workspace.id)).toEqual(['Album', 'Album (1)']);
    const copy = (await api.api.getFiles({ dir: String(workspace.id), order: 'name', desc: '0' })).folders.find((folder) => folder.name === 'Album (1)')!;
    await expect.poll(() => namesIn(api, copy.id)).toEqual(['inner', 'one.txt']);
    expect(await namesIn(api, existing)).toEqual(['one.txt']);
    await rm(dir, { recursive: true, force: true });
  });

  async function moveInto(page: Page, list: ReturnType<typeof folderList>, name: RegExp, target: string) {
    await list.getByRole('option', { name }).click();
    await page.getByRole('button', { name: 'Move to…' }).click();
    const dialog = page.getByRole('dialog', { name: /^Move/ });
    await dialog.getByRole('button', { name: `Open ${target}` }).click();
    await dialog.getByRole('button', { name: 'Move here' }).click();
    return dialog;
  }

  test('moving onto a taken name, Replace: the holder goes to the bin and the moved file takes its place', async ({ page, api, workspace }) => {
    const archive = await addFolder(api, workspace.id, 'Archive');
    const old = await addFile(api, archive, 'plan.txt', 'old plan');
    await addFile(api, workspace.id, 'plan.txt', 'new plan');
    await page.goto(workspace.url);
    const dialog = await moveInto(page, folderList(page, workspace.name), /plan\.txt/, 'Archive');
    await conflictDialog(page, 'plan.txt').getByRole('button', { name: 'Replace' }).click();
    await expect(dialog).toBeHidden();
    expect(await inBin(api, old)).toBe(true);
    expect(await namesIn(api, workspace.id)).toEqual(['Archive']);
    expect(await contentOf(api, archive, 'plan.txt')).toBe('new plan');
  });

  test('moving onto a taken name, Keep both: the moved file arrives under a numbered name', async ({ page, api, workspace }) => {
    const archive = await addFolder(api, workspace.id, 'Archive');
    await addFile(api, archive, 'plan.txt', 'old plan');
    await addFile(api, archive, 'plan (1).txt', 'older plan');
    await addFile(api, workspace.id, 'plan.txt', 'new plan');
    await page.goto(workspace.url);
    const dialog = await moveInto(page, folderList(page, workspace.name), /plan\.txt/, 'Archive');
    await conflictDialog(page, 'plan.txt').getByRole('button', { name: 'Keep both' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByRole('status').filter({ hasText: 'Moved “plan.txt” to' })).toBeVisible();
    expect(await namesIn(api, archive)).toEqual(['plan (1).txt', 'plan (2).txt', 'plan.txt']);
    expect(await contentOf(api, archive, 'plan (2).txt')).toBe('new plan');
  });
});
