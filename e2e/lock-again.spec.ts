/**
 * Locking again without logging out (Lock, docs/web-app.md): an encrypted folder or file this tab unlocked offers "Lock"
 * in its menu; locking it makes it ask for its password again, and an item inside an unlocked folder locks that folder.
 */
import type { Locator, Page } from '@playwright/test';
import { addFile, addFolder, call } from './files-api';
import { expect, folderList, test } from './fixtures';

const PASSWORD = 'Orchid-River-58';

const option = (list: Locator, name: string) => list.getByRole('option', { name: new RegExp(`\\b${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`) });

async function openMenu(page: Page, list: Locator, name: string) {
  await option(list, name).click();
  await page.getByRole('button', { name: 'More actions' }).click();
  return page.getByRole('menu');
}

async function unlockHere(page: Page) {
  const prompt = page.getByRole('region', { name: 'This folder is locked' });
  await prompt.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await prompt.getByRole('button', { name: 'Unlock' }).click();
  await expect(prompt).toHaveCount(0);
}

test('an unlocked folder is locked again from its menu, and asks for its password when opened', async ({ page, api, workspace }) => {
  const vault = await addFolder(api, workspace.id, 'Vault');
  await addFile(api, vault, 'inside.txt', 'inside');
  await call(api, 'FolderEncrypt', { dirid: vault, password: PASSWORD, password_tip: '' });
  await page.goto(workspace.url);
  const list = folderList(page, workspace.name);

  // Locked: nothing to lock.
  await expect((await openMenu(page, list, 'Vault')).getByRole('menuitem', { name: 'Lock', exact: true })).toHaveCount(0);
  await page.keyboard.press('Escape');

  await option(list, 'Vault').click();
  await page.keyboard.press('Enter');
  await unlockHere(page);
  await expect(option(folderList(page, 'Vault'), 'inside.txt')).toBeVisible();
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: workspace.name }).click();

  await (await openMenu(page, list, 'Vault')).getByRole('menuitem', { name: 'Lock', exact: true }).click();
  await expect(page.getByRole('status').filter({ hasText: '“Vault” is locked again.' })).toBeVisible();
  await option(list, 'Vault').click();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('region', { name: 'This folder is locked' })).toBeVisible();
});

test('Lock on a file inside an unlocked folder locks the folder: its listing turns to the password prompt', async ({ page, api, workspace }) => {
  const vault = await addFolder(api, workspace.id, 'Vault');
  await addFile(api, vault, 'inside.txt', 'inside');
  await call(api, 'FolderEncrypt', { dirid: vault, password: PASSWORD, password_tip: '' });
  await page.goto(`/folder/${vault}`);
  await unlockHere(page);

  await (await openMenu(page, folderList(page, 'Vault'), 'inside.txt')).getByRole('menuitem', { name: 'Lock', exact: true }).click();
  await expect(page.getByRole('region', { name: 'This folder is locked' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'New folder' })).toBeDisabled();
});
