/** Downloading folders, and several files at once, as one ZIP (issue 22). */
import { expect, test } from './fixtures';
import { addFile, addFolder } from './files-api';
import { zipEntries } from './zip-entries';

test('a selected folder downloads as one ZIP with everything beneath it; two files as download.zip', async ({ page, api, workspace }) => {
  const reports = await addFolder(api, workspace.id, 'Reports');
  const q1 = await addFolder(api, reports, 'Q1');
  await addFile(api, q1, 'january.txt', 'jan');
  await addFile(api, reports, 'summary.txt', 'sum');
  await addFile(api, workspace.id, 'one.txt', '1');
  await addFile(api, workspace.id, 'two.txt', '2');
  await page.goto(workspace.url);
  const list = page.getByRole('listbox', { name: `Contents of ${workspace.name}` });

  await list.getByRole('option', { name: /Reports/ }).click();
  const [folderZip] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download', exact: true }).click()]);
  expect(folderZip.suggestedFilename()).toBe('Reports.zip');
  expect(await zipEntries(await folderZip.path())).toEqual(['Reports/', 'Reports/Q1/', 'Reports/Q1/january.txt', 'Reports/summary.txt']);

  await list.getByRole('option', { name: /one\.txt/ }).click();
  await list.getByRole('option', { name: /two\.txt/ }).click({ modifiers: ['Control'] });
  const [filesZip] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download', exact: true }).click()]);
  expect(filesZip.suggestedFilename()).toBe('download.zip');
  expect(await zipEntries(await filesZip.path())).toEqual(['one.txt', 'two.txt']);
});
