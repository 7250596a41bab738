import { addFile, addFolder, call } from './files-api';
import { expect, folderList, keepScreenshot, test } from './fixtures';

const mediumDate = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium' });

test.describe('the recycle bin', () => {
  test('a deleted file is in the bin with its purge date, and comes back where it was, renamed when the name is taken', async ({
    page,
    api,
    workspace,
  }, testInfo) => {
    const docs = await addFolder(api, workspace.id, 'Docs');
    const name = `report ${workspace.id}.txt`;
    await addFile(api, docs, name, 'the report');
    await page.goto(`/folder/${docs}`);

    const list = folderList(page, 'Docs');
    await list.getByRole('option', { name: new RegExp(name) }).click();
    await page.getByRole('button', { name: 'Move to recycle bin' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Move to recycle bin' }).click();
    await expect(page.getByText('This folder is empty.')).toBeVisible();

    // Meanwhile another file takes the name.
    await addFile(api, docs, name, 'a new report');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Recycle bin' }).click();
    await expect(page.getByText('Deleted items are kept here for 30 days, then deleted for good.')).toBeVisible();
    const bin = page.getByRole('listbox', { name: 'Recycle bin' });
    const entry = bin.getByRole('option', { name: new RegExp(name) });
    await expect(entry).toContainText(`/${workspace.name}/Docs`);
    const purgeDates = [Date.now() + 30 * 86_400_000 - 60_000, Date.now() + 30 * 86_400_000 + 60_000].map((time) => mediumDate.format(time));
    await expect(entry).toContainText(new RegExp(purgeDates.map((date) => date.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')));
    await keepScreenshot(page, testInfo, 'recycle-bin');

    await entry.click();
    await page.getByRole('button', { name: 'Restore' }).click();
    const restored = page.getByRole('status').filter({ hasText: 'Restored 1 item' });
    await expect(restored).toContainText(`report ${workspace.id} (restored).txt`);
    await expect(entry).toHaveCount(0);
    await restored.getByRole('link', { name: `/${workspace.name}/Docs` }).click();

    await expect(page).toHaveURL(new RegExp(`/folder/${docs}$`));
    await expect(list.getByRole('option', { name: new RegExp(`report ${workspace.id} \\(restored\\)\\.txt`) })).toHaveAttribute('aria-selected', 'true');
    await expect(list.getByRole('option')).toHaveCount(2);
  });

  test('entries are deleted forever, and the bin is emptied, after asking', async ({ page, api, workspace }) => {
    const first = await addFolder(api, workspace.id, `first ${workspace.id}`);
    const second = await addFolder(api, workspace.id, `second ${workspace.id}`);
    await call(api, 'FolderAndFileDelete', { dirids: `${first},${second}`, fids: '', is_real: 0 });

    await page.goto('/bin');
    const bin = page.getByRole('listbox', { name: 'Recycle bin' });
    await bin.getByRole('option', { name: new RegExp(`first ${workspace.id}`) }).click();
    await page.keyboard.press('Delete');
    const confirm = page.getByRole('alertdialog', { name: `Delete “first ${workspace.id}” forever?` });
    await confirm.getByRole('button', { name: 'Delete forever' }).click();
    await expect(confirm).toBeHidden();
    await expect(bin.getByRole('option', { name: new RegExp(`first ${workspace.id}`) })).toHaveCount(0);
    await expect(bin.getByRole('option', { name: new RegExp(`second ${workspace.id}`) })).toBeVisible();

    await page.getByRole('button', { name: 'Empty recycle bin' }).click();
    const empty = page.getByRole('alertdialog', { name: 'Empty the recycle bin?' });
    await empty.getByRole('button', { name: 'Empty recycle bin' }).click();
    await expect(page.getByText('The recycle bin is empty.')).toBeVisible();
  });
});
