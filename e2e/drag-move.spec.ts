/**
 * Drag-and-drop move (issue 22): rows dragged onto a folder row, a breadcrumb or a grid tile are moved
 * there with Move; the target shows while hovered; Escape cancels; the move dialog's refusals apply.
 * Files dragged from the desktop still upload: e2e/uploads.spec.ts.
 */
import type { Locator, Page } from '@playwright/test';
import { addFile, addFolder, call, type ApiSession } from './files-api';
import { expect, folderList, test } from './fixtures';

async function namesIn(api: ApiSession, dir: number): Promise<string[]> {
  const listing = await call(api, 'GetFiles', { dir, order: 'name', desc: 0 });
  return [...listing.folders, ...listing.files].map((item) => item.name);
}

/** Presses on `from` and moves onto `to` in steps, the button held: the drag is on, over `to`. */
async function dragOver(page: Page, from: Locator, to: Locator): Promise<void> {
  await from.hover();
  await page.mouse.down();
  const box = await to.boundingBox();
  if (!box) throw new Error('the drop target is not on screen');
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 5 });
}

test.describe('drag-and-drop move', () => {
  test('a file row dropped onto a folder row is moved into it; the folder shows as the target while hovered', async ({ page, api, workspace }) => {
    const archive = await addFolder(api, workspace.id, 'Archive');
    await addFile(api, workspace.id, 'notes.txt', 'notes');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    const folderRow = list.getByRole('option', { name: /Archive/ });

    await dragOver(page, list.getByRole('option', { name: /notes\.txt/ }), folderRow);
    await expect(folderRow).toHaveAttribute('data-drop', 'accept');
    await page.mouse.up();

    await expect(page.getByRole('status').filter({ hasText: `Moved “notes.txt” to /${workspace.name}/Archive.` })).toBeVisible();
    await expect(list.getByRole('option', { name: /notes\.txt/ })).toHaveCount(0);
    await expect(folderRow).not.toHaveAttribute('data-drop');
    expect(await namesIn(api, archive)).toEqual(['notes.txt']);
  });

  test('the selected rows dropped onto a breadcrumb go up into that folder', async ({ page, api, workspace }) => {
    const inbox = await addFolder(api, workspace.id, 'Inbox');
    await addFile(api, inbox, 'a.txt', 'a');
    await addFile(api, inbox, 'b.txt', 'b');
    await addFile(api, inbox, 'c.txt', 'c');
    await page.goto(`/folder/${inbox}`);
    const list = folderList(page, 'Inbox');
    await list.getByRole('option', { name: /a\.txt/ }).click();
    await list.getByRole('option', { name: /b\.txt/ }).click({ modifiers: ['Shift'] });

    const crumb = page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: workspace.name });
    await dragOver(page, list.getByRole('option', { name: /b\.txt/ }), crumb);
    // The browser repeats dragover while the pointer rests; a small move stands for that.
    const box = (await crumb.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2 + 2, box.y + box.height / 2, { steps: 2 });
    await expect(crumb.locator('xpath=..')).toHaveAttribute('data-drop', 'accept');
    await page.mouse.up();

    await expect(page.getByRole('status').filter({ hasText: `Moved 2 items to /${workspace.name}.` })).toBeVisible();
    await expect(list.getByRole('option')).toHaveCount(1);
    expect(await namesIn(api, workspace.id)).toEqual(['Inbox', 'a.txt', 'b.txt']);
    expect(await namesIn(api, inbox)).toEqual(['c.txt']);
  });

  test('a row that is not selected is dragged alone, onto the root breadcrumb', async ({ page, api, workspace }) => {
    const name = `to-the-root ${workspace.id}.txt`;
    await addFile(api, workspace.id, 'stays.txt', 's');
    const file = await addFile(api, workspace.id, name, 'r');
    try {
      await page.goto(workspace.url);
      const list = folderList(page, workspace.name);
      await list.getByRole('option', { name: /stays\.txt/ }).click();
      await list.getByRole('option', { name }).dragTo(page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'All files' }));

      await expect(page.getByRole('status').filter({ hasText: `Moved “${name}” to /.` })).toBeVisible();
      expect(await namesIn(api, workspace.id)).toEqual(['stays.txt']);
      expect(await namesIn(api, 0)).toContain(name);
    } finally {
      await call(api, 'FolderAndFileDelete', { dirids: '', fids: String(file), is_real: 1 });
    }
  });

  test('a folder cannot be dropped into itself: the target shows refused, the drop says why, nothing moves', async ({ page, api, workspace }) => {
    const drafts = await addFolder(api, workspace.id, 'Drafts');
    await addFile(api, workspace.id, 'plan.txt', 'plan');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    const folderRow = list.getByRole('option', { name: /Drafts/ });
    await folderRow.click();
    await list.getByRole('option', { name: /plan\.txt/ }).click({ modifiers: ['Shift'] });

    // The file is dragged with the selection, which holds Drafts: Drafts cannot take it.
    await dragOver(page, list.getByRole('option', { name: /plan\.txt/ }), folderRow);
    await expect(folderRow).toHaveAttribute('data-drop', 'refuse');
    await page.mouse.up();

    const alert = page.getByRole('alert').filter({ hasText: 'Could not move 2 items.' });
    await expect(alert).toContainText('A folder cannot be moved into itself: “Drafts” is being moved.');
    expect(await namesIn(api, workspace.id)).toEqual(['Drafts', 'plan.txt']);
    expect(await namesIn(api, drafts)).toEqual([]);

    // The folder dragged alone, away and back onto itself: refused the same way.
    await alert.getByRole('button', { name: 'Dismiss' }).click();
    await folderRow.click();
    await dragOver(page, folderRow, list.getByRole('option', { name: /plan\.txt/ }));
    const box = await folderRow.boundingBox();
    await page.mouse.move(box!.x + box!.width / 2, box!.y + box!.height / 2, { steps: 5 });
    await expect(folderRow).toHaveAttribute('data-drop', 'refuse');
    await page.mouse.up();
    await expect(page.getByRole('alert')).toContainText('A folder cannot be moved into itself: “Drafts” is being moved.');
    expect(await namesIn(api, workspace.id)).toEqual(['Drafts', 'plan.txt']);
  });

  test('Escape cancels the drag: the target stops showing and the drop moves nothing', async ({ page, api, workspace }) => {
    const archive = await addFolder(api, workspace.id, 'Archive');
    await addFile(api, workspace.id, 'keep.txt', 'k');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    const folderRow = list.getByRole('option', { name: /Archive/ });

    await dragOver(page, list.getByRole('option', { name: /keep\.txt/ }), folderRow);
    await expect(folderRow).toHaveAttribute('data-drop', 'accept');
    await page.keyboard.press('Escape');
    await expect(folderRow).not.toHaveAttribute('data-drop');
    await page.mouse.up();

    await expect(list.getByRole('option', { name: /keep\.txt/ })).toBeVisible();
    expect(await namesIn(api, workspace.id)).toEqual(['Archive', 'keep.txt']);
    expect(await namesIn(api, archive)).toEqual([]);
  });

  test('in the grid, a file tile dropped onto a folder tile is moved into it', async ({ page, api, workspace }) => {
    const photos = await addFolder(api, workspace.id, 'Photos');
    await addFile(api, workspace.id, 'beach.txt', 'sand');
    await page.goto(workspace.url);
    await page.getByRole('button', { name: 'Grid' }).click();
    const list = folderList(page, workspace.name);

    await list.getByRole('option', { name: /beach\.txt/ }).dragTo(list.getByRole('option', { name: /Photos/ }));

    await expect(page.getByRole('status').filter({ hasText: `Moved “beach.txt” to /${workspace.name}/Photos.` })).toBeVisible();
    expect(await namesIn(api, photos)).toEqual(['beach.txt']);
  });
});
