import { addFile, addFolder } from './files-api';
import { expect, folderList, test } from './fixtures';

test.describe('copying', () => {
  test('a folder with a file is copied into another folder through the menu; the original stays', async ({ page, api, workspace }) => {
    const drafts = await addFolder(api, workspace.id, 'Drafts');
    await addFile(api, drafts, 'plan.txt', 'the plan');
    const archive = await addFolder(api, workspace.id, 'Archive');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    await list.getByRole('option', { name: /Drafts/ }).click();
    await page.getByRole('button', { name: 'More actions' }).click();
    await page.getByRole('menuitem', { name: 'Copy to…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Copy “Drafts”' });
    // A folder cannot be copied into itself: it cannot be opened in the picker.
    await expect(dialog.getByRole('button', { name: 'Drafts (being copied)' })).toBeDisabled();
    await dialog.getByRole('button', { name: 'Open Archive' }).click();
    await expect(dialog.getByText(`Destination: /${workspace.name}/Archive`)).toBeVisible();
    await dialog.getByRole('button', { name: 'Copy here' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByRole('status').filter({ hasText: `Copied “Drafts” to /${workspace.name}/Archive.` })).toBeVisible();

    // Both: the original where it was, the copy (with its file) in Archive.
    await expect(list.getByRole('option', { name: /Drafts/ })).toBeVisible();
    await list.getByRole('option', { name: /Drafts/ }).dblclick();
    await expect(folderList(page, 'Drafts').getByRole('option', { name: /plan\.txt/ })).toBeVisible();
    await page.goto(`/folder/${archive}`);
    await folderList(page, 'Archive').getByRole('option', { name: /Drafts/ }).dblclick();
    await expect(folderList(page, 'Drafts').getByRole('option', { name: /plan\.txt/ })).toBeVisible();
  });
});
