/**
 * The whole way of a share, as the issue tells it: the owner shares a folder in the share dialog
 * with an extraction code and a limit of 2 and copies its link; someone else opens that link in a
 * browser of their own (no session), enters a wrong code, then the right one, downloads twice and
 * then finds the limit reached. The parts are specified in detail in share-dialog.spec.ts and
 * share-page.spec.ts; this spec checks that they fit together.
 */
import { readFile } from 'node:fs/promises';
import { addFile, addFolder } from './files-api';
import { expect, expectNoSeriousViolations, folderList, test } from './fixtures';
import { BASE_URL_VARIABLE } from './service';

test('a folder shared in the dialog with a code and a limit of 2 is opened by a visitor, downloaded twice, then closed by its limit', async ({
  page,
  browser,
  api,
  workspace,
}, testInfo) => {
  const name = `Minutes ${workspace.id}`;
  const folder = await addFolder(api, workspace.id, name);
  await addFile(api, folder, 'april.txt', 'the April minutes');
  await addFile(api, folder, 'may.txt', 'the May minutes');

  // The owner shares it.
  await page.goto(workspace.url);
  await folderList(page, workspace.name).getByRole('option', { name: new RegExp(name) }).click();
  await page.getByRole('button', { name: 'More actions' }).click();
  await page.getByRole('menuitem', { name: 'Share…' }).click();
  const dialog = page.getByRole('dialog', { name: `Share “${name}”` });
  await dialog.getByRole('radio', { name: 'Type one' }).check();
  await dialog.getByLabel('Extraction code').fill('minutes-42');
  await dialog.getByLabel('Download limit').fill('2');
  await dialog.getByRole('button', { name: 'Share', exact: true }).click();
  const url = await dialog.getByRole('textbox', { name: 'Share link' }).inputValue();
  expect(url).toMatch(/\/s\/[A-Za-z0-9_-]{22}$/);
  await dialog.getByRole('button', { name: 'Close' }).click();

  // Someone else opens the link: a browser context of their own, never logged in.
  const context = await browser.newContext({ baseURL: process.env[BASE_URL_VARIABLE], acceptDownloads: true });
  try {
    const visitor = await context.newPage();
    await visitor.goto(url);
    const code = visitor.getByLabel('Extraction code', { exact: true });
    await code.fill('minutes-41');
    await visitor.getByRole('button', { name: 'Open' }).click();
    await expect(visitor.getByRole('alert').filter({ hasText: 'That extraction code is not right' })).toBeVisible();
    await code.fill('minutes-42');
    await visitor.getByRole('button', { name: 'Open' }).click();
    await expect(visitor.getByRole('heading', { level: 1, name })).toBeVisible();
    await expectNoSeriousViolations(visitor, testInfo, 'visitor-folder');

    const list = visitor.getByRole('listbox', { name: `Contents of ${name}` });
    for (const [file, text] of [
      ['april.txt', 'the April minutes'],
      ['may.txt', 'the May minutes'],
    ] as const) {
      // Opening a file previews it; the Download button takes the selected file.
      await list.getByRole('option', { name: new RegExp(file) }).click();
      const [download] = await Promise.all([visitor.waitForEvent('download'), visitor.getByRole('button', { name: 'Download', exact: true }).click()]);
      expect(download.suggestedFilename()).toBe(file);
      expect(await readFile(await download.path(), 'utf8')).toBe(text);
    }
    await expect(visitor.getByRole('heading', { name: 'This share has reached its download limit' })).toBeVisible();
  } finally {
    await context.close();
  }

  // The owner sees both downloads counted.
  await page.goto('/shares');
  await page.getByRole('searchbox', { name: 'Filter by name' }).fill(name);
  await expect(page.getByRole('list', { name: 'Shared items' }).getByRole('article', { name: new RegExp(`${name}$`) })).toContainText('Downloads:2 of 2');
});
