/** Downloading folders, and several files at once, as one ZIP (issue 22), encrypted ones while this tab has them unlocked. */
import { expect, test } from './fixtures';
import { addFile, addFolder, call } from './files-api';
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

test('an encrypted folder is zipped once this tab has unlocked it; locked, Download says it must be unlocked first', async ({ page, api, workspace }) => {
  test.setTimeout(60_000); // two password derivations (scrypt) on a shared machine
  const password = 'Orchid-River-58';
  const vault = await addFolder(api, workspace.id, 'Vault');
  await addFile(api, vault, 'inside.txt', 'inside');
  await call(api, 'FolderEncrypt', { dirid: vault, password, password_tip: '' });
  await page.goto(workspace.url);
  const list = page.getByRole('listbox', { name: `Contents of ${workspace.name}` });
  const download = page.getByRole('button', { name: 'Download', exact: true });

  await list.getByRole('option', { name: /Vault/ }).click();
  await download.click();
  await expect(page.getByText('It must be unlocked with its password first.')).toBeVisible();

  await list.getByRole('option', { name: /Vault/ }).click();
  await page.keyboard.press('Enter');
  const prompt = page.getByRole('region', { name: 'This folder is locked' });
  await prompt.getByLabel('Password', { exact: true }).fill(password);
  await prompt.getByRole('button', { name: 'Unlock' }).click();
  await expect(page.getByRole('listbox', { name: 'Contents of Vault' }).getByRole('option', { name: /inside\.txt/ })).toBeVisible();
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: workspace.name }).click();

  await list.getByRole('option', { name: /Vault/ }).click();
  const [zip] = await Promise.all([page.waitForEvent('download'), download.click()]);
  expect(zip.suggestedFilename()).toBe('Vault.zip');
  expect(await zipEntries(await zip.path())).toEqual(['Vault/', 'Vault/inside.txt']);
});
