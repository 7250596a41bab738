import { addFolder } from './files-api';
import { expect, folderList, keepScreenshot, test } from './fixtures';

test.describe('organising folders', () => {
  test('a new folder is created from the toolbar, then renamed with F2 and with the More actions menu', async ({ page, workspace }, testInfo) => {
    await page.goto(workspace.url);
    await expect(page.getByRole('heading', { level: 1, name: workspace.name })).toBeVisible();
    await expect(page.getByText('This folder is empty.')).toBeVisible();

    await page.getByRole('button', { name: 'New folder' }).click();
    const create = page.getByRole('dialog', { name: 'New folder' });
    await expect(create.getByLabel('Folder name')).toBeFocused();
    await create.getByLabel('Folder name').fill('Reports');
    await create.getByRole('button', { name: 'Create' }).click();
    await expect(create).toBeHidden();

    const list = folderList(page, workspace.name);
    // The new folder is listed and selected, ready for F2.
    await expect(list.getByRole('option', { name: /Reports/ })).toHaveAttribute('aria-selected', 'true');
    await page.keyboard.press('F2');
    const renameWithF2 = page.getByRole('dialog', { name: 'Rename “Reports”' });
    await expect(renameWithF2.getByLabel('New name')).toBeFocused();
    await renameWithF2.getByLabel('New name').fill('Reports 2026');
    await renameWithF2.getByLabel('New name').press('Enter');
    await expect(list.getByRole('option', { name: /Reports 2026/ })).toBeVisible();

    await list.getByRole('option', { name: /Reports 2026/ }).click();
    await page.getByRole('button', { name: 'More actions' }).click();
    await keepScreenshot(page, testInfo, 'actions-menu');
    await page.getByRole('menuitem', { name: 'Rename' }).click();
    const renameFromMenu = page.getByRole('dialog', { name: 'Rename “Reports 2026”' });
    await renameFromMenu.getByLabel('New name').fill('Annual reports');
    await renameFromMenu.getByRole('button', { name: 'Rename' }).click();
    await expect(list.getByRole('option', { name: /Annual reports/ })).toBeVisible();
    await expect(list.getByRole('option')).toHaveCount(1);

    // A name that is taken: told by the refusal's reason, and the dialog stays open.
    await page.getByRole('button', { name: 'New folder' }).click();
    await create.getByLabel('Folder name').fill('annual REPORTS');
    await create.getByRole('button', { name: 'Create' }).click();
    await expect(create.getByRole('alert')).toContainText('An item with this name already exists here.');
    await create.getByLabel('Folder name').press('Escape');
    await expect(create).toBeHidden();
  });

  test('a rename the service refuses shows the new name only until the answer, then the old one and why', async ({ page, api, workspace }) => {
    await addFolder(api, workspace.id, 'Invoices');
    await addFolder(api, workspace.id, 'Receipts');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    await list.getByRole('option', { name: /Receipts/ }).click();
    await page.keyboard.press('F2');
    const dialog = page.getByRole('dialog', { name: 'Rename “Receipts”' });
    await dialog.getByLabel('New name').fill('INVOICES');
    await dialog.getByLabel('New name').press('Enter');
    await expect(page.getByRole('alert').filter({ hasText: 'Could not rename “Receipts”.' })).toContainText('An item with this name already exists here.');
    await expect(list.getByRole('option', { name: /Receipts/ })).toBeVisible();
    await expect(list.getByRole('option', { name: /INVOICES/ })).toHaveCount(0);
    await page.getByRole('alert').getByRole('button', { name: 'Dismiss' }).click();
  });

  test('a name the service would refuse is refused in the dialog, saying why, and never sent', async ({ page, api, workspace }) => {
    await addFolder(api, workspace.id, 'Contracts');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    const sent: string[] = [];
    page.on('request', (request) => {
      if (/\.asmx\/(FolderAdd|FolderRename)$/.test(new URL(request.url()).pathname)) sent.push(request.url());
    });

    await page.getByRole('button', { name: 'New folder' }).click();
    const create = page.getByRole('dialog', { name: 'New folder' });
    // Shows as "exe.png", but is an .exe.
    await create.getByLabel('Folder name').fill('\u202egnp.exe');
    await create.getByRole('button', { name: 'Create' }).click();
    await expect(create.getByRole('alert')).toContainText('U+202E, which changes the direction of the text');
    await expect(create.getByLabel('Folder name')).toHaveAttribute('aria-invalid', 'true');
    await create.getByLabel('Folder name').fill('Plain name');
    await expect(create.getByRole('alert')).toHaveCount(0);
    await create.getByLabel('Folder name').press('Escape');

    await list.getByRole('option', { name: /Contracts/ }).click();
    await page.keyboard.press('F2');
    const rename = page.getByRole('dialog', { name: 'Rename “Contracts”' });
    await rename.getByLabel('New name').fill('\u200b\u200b');
    await rename.getByLabel('New name').press('Enter');
    await expect(rename.getByRole('alert')).toHaveText('The name has no visible character.');
    await rename.getByLabel('New name').press('Escape');
    await expect(list.getByRole('option', { name: /Contracts/ })).toBeVisible();
    expect(sent).toEqual([]);
  });

  test('a folder is moved with the folder picker, which cannot open the folder being moved', async ({ page, api, workspace }) => {
    await addFolder(api, workspace.id, 'Drafts');
    const archive = await addFolder(api, workspace.id, 'Archive');
    const year = await addFolder(api, archive, '2026');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    await list.getByRole('option', { name: /Drafts/ }).click();
    await page.getByRole('button', { name: 'Move to…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Move “Drafts”' });
    await expect(dialog.getByRole('button', { name: 'Drafts (being moved)' })).toBeDisabled();
    // Already where the folder is: nothing to do here.
    await expect(dialog.getByRole('button', { name: 'Move here' })).toBeDisabled();
    await dialog.getByRole('button', { name: 'Open Archive' }).click();
    await dialog.getByRole('button', { name: 'Open 2026' }).click();
    await expect(dialog.getByText(`Destination: /${workspace.name}/Archive/2026`)).toBeVisible();
    await dialog.getByRole('button', { name: 'Move here' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByRole('status').filter({ hasText: `Moved “Drafts” to /${workspace.name}/Archive/2026.` })).toBeVisible();
    await expect(list.getByRole('option', { name: /Drafts/ })).toHaveCount(0);

    // It is there now; the breadcrumbs lead back, and so does Backspace.
    await list.getByRole('option', { name: /Archive/ }).dblclick();
    await folderList(page, 'Archive').getByRole('option', { name: /2026/ }).dblclick();
    await expect(page).toHaveURL(new RegExp(`/folder/${year}$`));
    await expect(folderList(page, '2026').getByRole('option', { name: /Drafts/ })).toBeVisible();
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
    await expect(crumbs.getByRole('link')).toHaveText(['All files', workspace.name, 'Archive']);
    await page.keyboard.press('Backspace');
    await expect(page).toHaveURL(new RegExp(`/folder/${archive}$`));
    await page.goBack();
    await expect(page).toHaveURL(new RegExp(`/folder/${year}$`));
    await crumbs.getByRole('link', { name: workspace.name }).click();
    await expect(page).toHaveURL(new RegExp(`${workspace.url}$`));
  });

  test('Delete moves to the recycle bin, saying how long it keeps items; Shift+Delete deletes permanently after asking', async ({
    page,
    api,
    workspace,
  }) => {
    const suffix = workspace.id;
    await addFolder(api, workspace.id, `Old ${suffix}`);
    await addFolder(api, workspace.id, `Gone ${suffix}`);
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    await list.getByRole('option', { name: new RegExp(`Old ${suffix}`) }).click();
    await page.keyboard.press('Delete');
    const toBin = page.getByRole('dialog', { name: `Move “Old ${suffix}” to the recycle bin?` });
    await expect(toBin).toContainText('Items in the recycle bin are kept for 30 days and then deleted for good.');
    await toBin.getByRole('button', { name: 'Move to recycle bin' }).click();
    await expect(toBin).toBeHidden();
    await expect(list.getByRole('option', { name: new RegExp(`Old ${suffix}`) })).toHaveCount(0);

    await list.getByRole('option', { name: new RegExp(`Gone ${suffix}`) }).click();
    await page.keyboard.press('Shift+Delete');
    const forGood = page.getByRole('alertdialog', { name: `Delete “Gone ${suffix}” permanently?` });
    await expect(forGood).toContainText('This cannot be undone.');
    // Cancel has the focus: Enter does not delete by accident.
    await expect(forGood.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await forGood.getByRole('button', { name: 'Delete permanently' }).click();
    await expect(forGood).toBeHidden();
    await expect(page.getByText('This folder is empty.')).toBeVisible();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Recycle bin' }).click();
    const bin = page.getByRole('listbox', { name: 'Recycle bin' });
    await expect(bin.getByRole('option', { name: new RegExp(`Old ${suffix}`) })).toBeVisible();
    await expect(bin.getByRole('option', { name: new RegExp(`Gone ${suffix}`) })).toHaveCount(0);
  });

  test('selection and the keyboard: click, Shift-click, Ctrl-click, arrows, Ctrl+A, Escape, Enter opens, Backspace goes up', async ({
    page,
    api,
    workspace,
  }) => {
    const ids: number[] = [];
    for (const name of ['alpha', 'bravo', 'charlie', 'delta']) ids.push(await addFolder(api, workspace.id, name));
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    const option = (name: string) => list.getByRole('option', { name: new RegExp(name) });
    const selectedCount = page.getByText(/\d+ selected/);

    await option('alpha').click();
    await option('charlie').click({ modifiers: ['Shift'] });
    await expect(selectedCount).toHaveText('3 selected');
    await option('bravo').click({ modifiers: ['ControlOrMeta'] });
    await expect(selectedCount).toHaveText('2 selected');
    await expect(option('bravo')).toHaveAttribute('aria-selected', 'false');

    await page.keyboard.press('ControlOrMeta+a');
    await expect(selectedCount).toHaveText('4 selected');
    await page.keyboard.press('Escape');
    await expect(selectedCount).toHaveCount(0);

    await page.keyboard.press('Home');
    await expect(option('alpha')).toHaveAttribute('aria-selected', 'true');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Shift+ArrowDown');
    await expect(selectedCount).toHaveText('2 selected');
    await expect(list).toBeFocused();
    await page.keyboard.press('ArrowDown');
    await expect(option('delta')).toHaveAttribute('aria-selected', 'true');
    await expect(selectedCount).toHaveText('1 selected');

    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(new RegExp(`/folder/${ids[3]}$`));
    await expect(page.getByRole('heading', { level: 1, name: 'delta' })).toBeVisible();
    await page.keyboard.press('Backspace');
    await expect(page).toHaveURL(new RegExp(`${workspace.url}$`));
  });
});
