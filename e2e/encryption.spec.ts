/**
 * Encryption in the file manager, against the real service: the encrypt dialog (its checks, the
 * strength meter, the warning), the lock on encrypted items, the unlock prompt of a locked folder
 * in a new session (its hint, a wrong password, the right one), a download of an unlocked file,
 * the unlock dialog of a locked file's download, and Decrypt (and what it says for an item inside
 * an encrypted folder).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Locator, Page } from '@playwright/test';
import { addFile, addFolder, call } from './files-api';
import { expect, expectNoSeriousViolations, folderList, keepScreenshot, test } from './fixtures';
import { FILES_ACCOUNT, FILES_PASSWORD } from './service';

const PASSWORD = 'Orchid-River-58';
const HINT = 'The flower by the water';

/** An item of a folder's list by its name (its accessible name also says "Encrypted", "Folder:", its size and time). */
const option = (list: Locator, name: string) => list.getByRole('option', { name: new RegExp(`\\b${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`) });

async function chooseAction(page: Page, list: Locator, name: string, action: string) {
  await option(list, name).click();
  await page.getByRole('button', { name: 'More actions' }).click();
  await page.getByRole('menuitem', { name: action }).click();
}

async function logOutAndIn(page: Page) {
  await page.getByRole('banner').getByRole('button', { name: 'Log out' }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.getByLabel('Account name or ID').fill(FILES_ACCOUNT);
  await page.getByLabel('Password').fill(FILES_PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('banner').getByTestId('account-name')).toHaveText(FILES_ACCOUNT);
}

test.describe('encryption', () => {
  test('a folder encrypted in the dialog is locked in a new session, opens with its password, downloads, and is decrypted', async ({
    page,
    api,
    workspace,
  }, testInfo) => {
    test.setTimeout(60_000);
    const vault = await addFolder(api, workspace.id, 'Vault');
    const bytes = randomBytes(100_000);
    await addFile(api, vault, 'secret.bin', bytes);
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    await test.step('the encrypt dialog checks the password and the hint, and warns', async () => {
      await chooseAction(page, list, 'Vault', 'Encrypt…');
      const dialog = page.getByRole('dialog', { name: 'Encrypt “Vault”' });
      await expect(dialog).toContainText('If you forget this password, nobody can recover the files — not even us. Names, sizes and dates stay visible.');
      const password = dialog.getByLabel('Password', { exact: true });
      const confirm = dialog.getByLabel('Confirm password');
      const hint = dialog.getByLabel('Password hint (optional)');
      await expect(password).toBeFocused();
      await expect(password).toHaveAttribute('type', 'password');
      await expectNoSeriousViolations(page, testInfo, 'encrypt-dialog');

      // A weak password says so in words.
      await password.fill('test');
      await expect(dialog.getByTestId('password-strength')).toContainText('Strength: weak.');
      // The eye shows what was typed.
      const show = dialog.getByRole('button', { name: 'Show password' }).first();
      await show.click();
      await expect(show).toHaveAttribute('aria-pressed', 'true');
      await expect(password).toHaveAttribute('type', 'text');
      await show.click();
      await expect(password).toHaveAttribute('type', 'password');

      // The two passwords differ: the confirmation says so, and gets the focus.
      await password.fill(PASSWORD);
      await expect(dialog.getByTestId('password-strength')).toContainText(/Strength: (good|strong)\./);
      await confirm.fill(`${PASSWORD}x`);
      await dialog.getByRole('button', { name: 'Encrypt' }).click();
      await expect(dialog.getByText('The two passwords are not the same.')).toBeVisible();
      await expect(confirm).toHaveAttribute('aria-invalid', 'true');
      await expect(confirm).toBeFocused();

      // A hint that gives the password away (in other capitals) is refused, as the service would.
      await confirm.fill(PASSWORD);
      await hint.fill(`it is ${PASSWORD.toUpperCase()}`);
      await dialog.getByRole('button', { name: 'Encrypt' }).click();
      await expect(dialog.getByText('The hint must not contain the password', { exact: false })).toBeVisible();
      await expect(hint).toBeFocused();
      await expect(dialog.getByText('The two passwords are not the same.')).toHaveCount(0);
      await keepScreenshot(page, testInfo, 'encrypt-dialog');

      await hint.fill(HINT);
      await dialog.getByRole('button', { name: 'Encrypt' }).click();
      await expect(dialog).toBeHidden();
      await expect(page.getByRole('status').filter({ hasText: 'Encrypted “Vault”.' })).toBeVisible();
    });

    await test.step('the folder wears a lock, named for screen readers, in the list and in the grid', async () => {
      await expect(option(list, 'Vault')).toHaveAccessibleName(/^Encrypted Folder: Vault/);
      await expect(option(list, 'Vault').getByTestId('lock-mark')).toBeVisible();
      await page.getByRole('button', { name: 'Grid' }).click();
      await expect(option(list, 'Vault').getByTestId('lock-mark')).toBeVisible();
      await expect(option(list, 'Vault')).toHaveAccessibleName(/^Encrypted Folder: Vault/);
      await keepScreenshot(page, testInfo, 'lock-mark-grid');
      await page.getByRole('button', { name: 'List' }).click();
    });

    await test.step('in a new session, the folder asks for its password and shows the hint', async () => {
      await logOutAndIn(page);
      await page.goto(workspace.url);
      await option(list, 'Vault').click();
      await page.keyboard.press('Enter');
      const prompt = page.getByRole('region', { name: 'This folder is locked' });
      await expect(prompt).toContainText(`Password hint: ${HINT}`);
      await expect(prompt.getByLabel('Password', { exact: true })).toBeFocused();
      await keepScreenshot(page, testInfo, 'unlock-prompt');
      await expectNoSeriousViolations(page, testInfo, 'unlock-prompt');
    });

    await test.step('a wrong password is refused, with the focus back in the field; the right one shows the folder', async () => {
      const prompt = page.getByRole('region', { name: 'This folder is locked' });
      const field = prompt.getByLabel('Password', { exact: true });
      await field.fill('Orchid-River-00');
      await prompt.getByRole('button', { name: 'Unlock' }).click();
      await expect(prompt.getByText('Wrong password. Check it and try again.').first()).toBeVisible();
      await expect(field).toBeFocused();
      await expect(field).toHaveAttribute('aria-invalid', 'true');

      await field.fill(PASSWORD);
      await field.press('Enter');
      await expect(option(folderList(page, 'Vault'), 'secret.bin')).toBeVisible();
      await expect(prompt).toHaveCount(0);
      await expect(page.getByRole('heading', { name: 'Vault', level: 1 })).toBeFocused();
    });

    await test.step('its file downloads byte for byte', async () => {
      await option(folderList(page, 'Vault'), 'secret.bin').click();
      const download = page.waitForEvent('download');
      await page.getByRole('main').getByRole('button', { name: 'Download', exact: true }).click();
      const saved = await (await download).path();
      expect((await download).suggestedFilename()).toBe('secret.bin');
      expect(Buffer.compare(await readFile(saved), bytes)).toBe(0);
    });

    await test.step('Decrypt, with the password, takes the lock away', async () => {
      await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: workspace.name }).click();
      await chooseAction(page, list, 'Vault', 'Decrypt…');
      const dialog = page.getByRole('dialog', { name: 'Decrypt “Vault”' });
      await expect(dialog).toContainText(`Password hint: ${HINT}`);
      await dialog.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await dialog.getByRole('button', { name: 'Decrypt' }).click();
      await expect(dialog).toBeHidden();
      await expect(page.getByRole('status').filter({ hasText: 'Decrypted “Vault”.' })).toBeVisible();
      await expect(option(list, 'Vault').getByTestId('lock-mark')).toHaveCount(0);
      await expect(option(list, 'Vault')).not.toHaveAccessibleName(/Encrypted/);
    });
  });

  test('downloading a locked file asks for its password in a dialog, then downloads it', async ({ page, api, workspace }, testInfo) => {
    const bytes = randomBytes(5_000);
    const file = await addFile(api, workspace.id, 'diary.bin', bytes);
    await call(api, 'FileEncrypt', { fid: file, password: PASSWORD, password_tip: HINT });
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    // Cancel: nothing is downloaded, and nothing is reported as failed.
    const downloadButton = page.getByRole('button', { name: 'Download' });
    await option(list, 'diary.bin').click();
    await downloadButton.click();
    const dialog = page.getByRole('dialog', { name: 'Unlock “diary.bin”' });
    await expect(dialog).toContainText('This file is encrypted. Enter its password to download it.');
    await expect(dialog).toContainText(`Password hint: ${HINT}`);
    await expectNoSeriousViolations(page, testInfo, 'unlock-dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByRole('alert').filter({ hasText: 'diary.bin' })).toHaveCount(0);

    await downloadButton.click();
    await dialog.getByLabel('Password', { exact: true }).fill(PASSWORD);
    const download = page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Unlock' }).click();
    const saved = await (await download).path();
    await expect(dialog).toBeHidden();
    expect(Buffer.compare(await readFile(saved), bytes)).toBe(0);
  });

  test('a folder inside a locked folder asks for the outer password; decrypting it alone names the folder to decrypt', async ({
    page,
    api,
    workspace,
  }, testInfo) => {
    const outer = await addFolder(api, workspace.id, 'Outer');
    const inner = await addFolder(api, outer, 'Inner');
    await call(api, 'FolderEncrypt', { dirid: outer, password: PASSWORD, password_tip: '' });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`/folder/${inner}`);

    // Opened by its address: what locks it is the folder above, whose name this page has not seen.
    const prompt = page.getByRole('region', { name: 'This folder is locked' });
    await expect(prompt).toContainText('It is inside an encrypted folder further up, which is locked. Enter that folder’s password to open it.');
    await expect(page.getByRole('button', { name: 'Upload', exact: true })).toBeDisabled();
    await expectNoSeriousViolations(page, testInfo, 'unlock-prompt-dark');
    await prompt.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await prompt.getByRole('button', { name: 'Unlock' }).click();
    await expect(page.getByText('This folder is empty.')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Upload', exact: true })).toBeEnabled();
    // An upload into it names the folder, and is encrypted as it arrives: listed encrypted once added.
    await page.getByTestId('upload-files-input').setInputFiles({ name: 'plan.txt', mimeType: 'text/plain', buffer: Buffer.from('the plan, encrypted on arrival') });
    // Done without a failure: the upload panel folds into its chip.
    await expect(page.getByTestId('upload-panel')).toHaveAttribute('data-folded', 'true');
    await expect(option(folderList(page, 'Inner'), 'plan.txt')).toHaveAccessibleName(/Encrypted/);

    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Outer' }).click();
    const list = folderList(page, 'Outer');
    await expect(option(list, 'Inner')).toHaveAccessibleName(/Encrypted/);

    await chooseAction(page, list, 'Inner', 'Decrypt…');
    const dialog = page.getByRole('dialog', { name: 'Decrypt “Inner”' });
    await dialog.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await dialog.getByRole('button', { name: 'Decrypt' }).click();
    await expect(dialog.getByRole('alert')).toHaveText(
      '“Inner” is inside the encrypted folder “Outer” and cannot be decrypted on its own. Decrypt the folder “Outer” instead, or move “Inner” out of it first.',
    );
    await expectNoSeriousViolations(page, testInfo, 'decrypt-dialog-dark');
  });
});
