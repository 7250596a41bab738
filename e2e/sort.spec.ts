import { addFile, addFolder } from './files-api';
import { expect, folderList, keepScreenshot, test } from './fixtures';

test.describe('sorting', () => {
  test('column headers and the sort control change the order, which the address keeps', async ({ page, api, workspace }, testInfo) => {
    await addFolder(api, workspace.id, 'zeta folder');
    await addFile(api, workspace.id, 'b-medium.txt', 'm'.repeat(2_000));
    await addFile(api, workspace.id, 'a-large.csv', 'l'.repeat(30_000));
    await addFile(api, workspace.id, 'c-small.pdf', 's'.repeat(10));
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    const names = list.getByRole('option');

    // By name, A to Z; folders first in every order.
    await expect(names).toHaveText([/zeta folder/, /a-large\.csv/, /b-medium\.txt/, /c-small\.pdf/]);

    await page.getByRole('button', { name: 'Size' }).click();
    await expect(page).toHaveURL(/order=size&desc=1/);
    await expect(names).toHaveText([/zeta folder/, /a-large\.csv/, /b-medium\.txt/, /c-small\.pdf/]);
    await page.getByRole('button', { name: 'Size, sorted descending' }).click();
    await expect(page).toHaveURL(/order=size&desc=0/);
    await expect(names).toHaveText([/zeta folder/, /c-small\.pdf/, /b-medium\.txt/, /a-large\.csv/]);

    await page.getByRole('button', { name: 'Name' }).click();
    await page.getByRole('button', { name: 'Name, sorted ascending' }).click();
    await expect(page).toHaveURL(/order=name&desc=1/);
    await expect(names).toHaveText([/zeta folder/, /c-small\.pdf/, /b-medium\.txt/, /a-large\.csv/]);

    // The grid has no headers: the sort control does the same.
    await page.getByRole('button', { name: 'Grid' }).click();
    await expect(page.getByRole('button', { name: 'Grid' })).toHaveAttribute('aria-pressed', 'true');
    await page.getByLabel('Sort by').selectOption('size');
    await expect(page).toHaveURL(/order=size&desc=1/);
    await expect(names).toHaveText([/zeta folder/, /a-large\.csv/, /b-medium\.txt/, /c-small\.pdf/]);
    await page.getByRole('button', { name: 'Sort order: Descending' }).click();
    await expect(names).toHaveText([/zeta folder/, /c-small\.pdf/, /b-medium\.txt/, /a-large\.csv/]);
    await keepScreenshot(page, testInfo, 'folder-grid');

    // A reload keeps the order and the view.
    await page.reload();
    await expect(page.getByLabel('Sort by')).toHaveValue('size');
    await expect(page.getByRole('button', { name: 'Sort order: Ascending' })).toBeVisible();
    await expect(names).toHaveText([/zeta folder/, /c-small\.pdf/, /b-medium\.txt/, /a-large\.csv/]);
    await page.getByRole('button', { name: 'List' }).click();
  });
});
