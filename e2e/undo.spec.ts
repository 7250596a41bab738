/**
 * Undo (issue 22): a delete to the recycle bin and a move say so in a notice with Undo for about 8 s;
 * Undo restores from the bin, or moves the items back; Ctrl+Z presses it. Notices keep clear of the
 * list's status line and its last row.
 */
import { addFile, addFolder, addFolders, call, type ApiSession } from './files-api';
import { expect, folderList, test } from './fixtures';

async function namesIn(api: ApiSession, dir: number): Promise<string[]> {
  const listing = await call(api, 'GetFiles', { dir, order: 'name', desc: 0 });
  return [...listing.folders, ...listing.files].map((item) => item.name);
}

test.describe('undo', () => {
  test('a delete to the recycle bin is undone from its notice: the file is back where it was', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'report.txt', 'figures');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    await list.getByRole('option', { name: /report\.txt/ }).click();
    await page.keyboard.press('Delete');
    await page.getByRole('dialog').getByRole('button', { name: 'Move to recycle bin' }).click();
    const notice = page.getByRole('status').locator('div').filter({ hasText: 'Moved “report.txt” to the recycle bin.' });
    await expect(list.getByRole('option', { name: /report\.txt/ })).toHaveCount(0);
    expect(await namesIn(api, workspace.id)).toEqual([]);

    await notice.getByRole('button', { name: 'Undo' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Restored “report.txt” from the recycle bin.' })).toBeVisible();
    await expect(notice).toHaveCount(0);
    await expect(list.getByRole('option', { name: /report\.txt/ })).toBeVisible();
    expect(await namesIn(api, workspace.id)).toEqual(['report.txt']);
  });

  test('a move through the dialog is undone with Ctrl+Z while its notice shows: the folder goes back', async ({ page, api, workspace }) => {
    await addFolder(api, workspace.id, 'Drafts');
    const archive = await addFolder(api, workspace.id, 'Archive');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    await list.getByRole('option', { name: /Drafts/ }).click();
    await page.getByRole('button', { name: 'Move to…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Move “Drafts”' });
    await dialog.getByRole('button', { name: 'Open Archive' }).click();
    await dialog.getByRole('button', { name: 'Move here' }).click();
    await expect(page.getByRole('status').filter({ hasText: `Moved “Drafts” to /${workspace.name}/Archive.` })).toBeVisible();
    await expect(list.getByRole('option', { name: /Drafts/ })).toHaveCount(0);
    expect(await namesIn(api, archive)).toEqual(['Drafts']);

    await page.keyboard.press('Control+z');
    await expect(page.getByRole('status').filter({ hasText: 'Moved “Drafts” back.' })).toBeVisible();
    await expect(list.getByRole('option', { name: /Drafts/ })).toBeVisible();
    expect(await namesIn(api, archive)).toEqual([]);
    expect(await namesIn(api, workspace.id)).toEqual(['Archive', 'Drafts']);
  });

  test('a drag-and-drop move is undone from its notice with the keyboard', async ({ page, api, workspace }) => {
    const photos = await addFolder(api, workspace.id, 'Photos');
    await addFile(api, workspace.id, 'beach.txt', 'sand');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    await list.getByRole('option', { name: /beach\.txt/ }).dragTo(list.getByRole('option', { name: /Photos/ }));
    const undo = page.getByRole('status').getByRole('button', { name: 'Undo' });
    await expect(undo).toBeVisible();
    expect(await namesIn(api, photos)).toEqual(['beach.txt']);

    await undo.focus();
    await page.keyboard.press('Enter');
    await expect(page.getByRole('status').filter({ hasText: 'Moved “beach.txt” back.' })).toBeVisible();
    expect(await namesIn(api, workspace.id)).toEqual(['Photos', 'beach.txt']);
  });

  test('notices keep clear of the status line and of the last row, and go by themselves', async ({ page, api, workspace }) => {
    await addFolders(api, workspace.id, Array.from({ length: 40 }, (_, index) => `Folder ${String(index).padStart(2, '0')}`));
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    const statusLine = page.getByText('40 folders, 0 files');
    await expect(statusLine).toBeVisible();

    await list.getByRole('option', { name: /Folder 00/ }).click();
    await page.keyboard.press('Delete');
    await page.getByRole('dialog').getByRole('button', { name: 'Move to recycle bin' }).click();
    await expect(page.getByText('39 folders, 0 files')).toBeVisible();
    const notices = page.getByRole('region', { name: 'Notifications' });
    await expect(notices.getByRole('button', { name: 'Undo' })).toBeVisible();

    // The list is scrolled to its end (End moves the cursor to the last item).
    await list.focus();
    await page.keyboard.press('End');
    const lastRow = list.getByRole('option', { name: /Folder 39/ });
    await expect(lastRow).toBeInViewport();
    const noticesTop = (await notices.boundingBox())!.y;
    const bottomOf = async (locator: typeof lastRow) => {
      const box = (await locator.boundingBox())!;
      return box.y + box.height;
    };
    expect(await bottomOf(page.getByText('39 folders, 0 files'))).toBeLessThanOrEqual(noticesTop);
    expect(await bottomOf(lastRow)).toBeLessThanOrEqual(noticesTop);

    await expect(notices.getByRole('button', { name: 'Undo' })).toBeHidden({ timeout: 12_000 });
  });
});
