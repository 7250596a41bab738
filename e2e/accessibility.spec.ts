/**
 * An axe-core scan of every page and every dialog, in light and dark, with no serious or critical
 * violations; and a screenshot of each, kept as test output.
 */
import { addFile, addFolder, call } from './files-api';
import { expect, expectNoSeriousViolations, folderList, keepScreenshot, test } from './fixtures';

test.describe('accessibility', () => {
  // Many scans of a second or so each, and a screenshot after each: 45–60 s for the dialogs' test on a busy machine.
  test.describe.configure({ timeout: 180_000 });

  test('the login page', async ({ page }, testInfo) => {
    await page.goto('/login');
    await expect(page.getByRole('heading', { name: 'Log in to Files' })).toBeVisible();
    await expectNoSeriousViolations(page, testInfo, 'login');
    await keepScreenshot(page, testInfo, 'login');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectNoSeriousViolations(page, testInfo, 'login-dark');
    await keepScreenshot(page, testInfo, 'login-dark');
  });

  test('a folder in list and grid views, its menu and every dialog, light and dark', async ({ page, api, workspace }, testInfo) => {
    await addFolder(api, workspace.id, 'Contracts');
    await addFile(api, workspace.id, 'budget.xlsx', 'budget');
    await addFile(api, workspace.id, 'holiday.jpg', 'jpeg');
    await addFile(api, workspace.id, 'slides.pptx', 'slides');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    await expect(list.getByRole('option')).toHaveCount(4);
    await list.getByRole('option', { name: /budget/ }).click();

    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.getByRole('button', { name: 'List' }).click();
      await expectNoSeriousViolations(page, testInfo, `folder-list-${scheme}`);
      await keepScreenshot(page, testInfo, `folder-list-${scheme}`);
      await page.getByRole('button', { name: 'Grid' }).click();
      await expectNoSeriousViolations(page, testInfo, `folder-grid-${scheme}`);
      await keepScreenshot(page, testInfo, `folder-grid-${scheme}`);
    }
    await page.getByRole('button', { name: 'List' }).click();
    await page.emulateMedia({ colorScheme: 'light' });

    await page.getByRole('button', { name: 'More actions' }).click();
    await expect(page.getByRole('menu')).toBeVisible();
    await expectNoSeriousViolations(page, testInfo, 'actions-menu');
    await page.keyboard.press('Escape');
    await expect(page.getByRole('menu')).toBeHidden();
    await expect(page.getByRole('button', { name: 'More actions' })).toBeFocused();

    const dialogs: { name: string; open: () => Promise<void>; role?: 'dialog' | 'alertdialog' }[] = [
      { name: 'new-folder', open: () => page.getByRole('button', { name: 'New folder' }).click() },
      { name: 'rename', open: () => page.keyboard.press('F2') },
      { name: 'move', open: () => page.getByRole('button', { name: 'Move to…' }).click() },
      { name: 'delete', open: () => page.keyboard.press('Delete') },
      { name: 'delete-permanently', open: () => page.keyboard.press('Shift+Delete'), role: 'alertdialog' },
    ];
    for (const { name, open, role = 'dialog' } of dialogs) {
      await list.getByRole('option', { name: /budget/ }).click();
      await open();
      const dialog = page.getByRole(role);
      await expect(dialog).toBeVisible();
      // Focus is in the dialog, and stays there.
      await expect(dialog.locator(':focus')).toHaveCount(1);
      for (let i = 0; i < 6; i++) await page.keyboard.press('Tab');
      await expect(dialog.locator(':focus')).toHaveCount(1);
      await expectNoSeriousViolations(page, testInfo, `dialog-${name}`);
      await keepScreenshot(page, testInfo, `dialog-${name}`);
      await page.keyboard.press('Escape');
      await expect(dialog).toBeHidden();
    }

    // Dark, in Chinese: the language switcher, and a dialog in the dark theme.
    // The theme button goes round: system, light, dark.
    await page.getByRole('button', { name: 'Theme: System' }).click();
    await page.getByRole('button', { name: 'Theme: Light' }).click();
    await expect(page.locator('html')).toHaveClass(/\bdark\b/);
    await page.getByLabel('Language').selectOption('zh-CN');
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
    await expect(page.getByRole('button', { name: '新建文件夹' })).toBeVisible();
    await page.getByRole('button', { name: '新建文件夹' }).click();
    await expectNoSeriousViolations(page, testInfo, 'dialog-dark-zh');
    await keepScreenshot(page, testInfo, 'dialog-dark-zh');
    await page.keyboard.press('Escape');
    await expectNoSeriousViolations(page, testInfo, 'folder-dark-zh');
    await keepScreenshot(page, testInfo, 'folder-dark-zh');
    await page.getByLabel('语言').selectOption('en');
    await page.getByRole('button', { name: 'Theme: Dark' }).click();
    await expect(page.locator('html')).not.toHaveClass(/\b(dark|light)\b/);
  });

  test('search, recent uploads, the recycle bin with its dialogs, an empty folder and the not-found page', async ({
    page,
    api,
    workspace,
  }, testInfo) => {
    const tag = `a11y${workspace.id}`;
    await addFile(api, workspace.id, `minutes ${tag}.docx`, 'minutes');
    const old = await addFolder(api, workspace.id, `old ${tag}`);
    await call(api, 'FolderAndFileDelete', { dirids: String(old), fids: '', is_real: 0 });
    const empty = await addFolder(api, workspace.id, 'Empty');

    await page.goto(`/search?q=${tag}`);
    await expect(page.getByRole('option', { name: new RegExp(`minutes ${tag}`) })).toBeVisible();
    await expectNoSeriousViolations(page, testInfo, 'search');
    await keepScreenshot(page, testInfo, 'search');

    await page.goto('/recent');
    await expect(page.getByRole('option', { name: new RegExp(`minutes ${tag}`) })).toBeVisible();
    await expectNoSeriousViolations(page, testInfo, 'recent');
    await keepScreenshot(page, testInfo, 'recent');

    await page.goto('/bin');
    const entry = page.getByRole('option', { name: new RegExp(`old ${tag}`) });
    await entry.click();
    await expectNoSeriousViolations(page, testInfo, 'bin');
    await keepScreenshot(page, testInfo, 'bin');
    await page.getByRole('button', { name: 'Delete forever' }).click();
    await expectNoSeriousViolations(page, testInfo, 'dialog-delete-forever');
    await keepScreenshot(page, testInfo, 'dialog-delete-forever');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Empty recycle bin' }).click();
    await expectNoSeriousViolations(page, testInfo, 'dialog-empty-bin');
    await page.keyboard.press('Escape');
    await entry.click();
    await page.getByRole('button', { name: 'Restore' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Restored 1 item' })).toBeVisible();
    await expectNoSeriousViolations(page, testInfo, 'bin-restored');
    await keepScreenshot(page, testInfo, 'bin-restored');

    await page.goto(`/folder/${empty}`);
    await expect(page.getByText('This folder is empty.')).toBeVisible();
    await expectNoSeriousViolations(page, testInfo, 'empty-folder');
    await keepScreenshot(page, testInfo, 'empty-folder');

    await page.goto('/folder/999999');
    await expect(page.getByRole('alert').filter({ hasText: 'Not found' })).toContainText('does not exist, or it is not yours');
    await expectNoSeriousViolations(page, testInfo, 'missing-folder');
    await keepScreenshot(page, testInfo, 'missing-folder');

    await page.goto('/no/such/page');
    await expect(page.getByRole('heading', { name: 'Page not found' })).toBeVisible();
    await expectNoSeriousViolations(page, testInfo, 'not-found');
    await keepScreenshot(page, testInfo, 'not-found');
  });
});
