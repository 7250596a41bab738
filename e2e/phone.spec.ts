import { addFile, addFolder } from './files-api';
import { expect, folderList, keepScreenshot, test } from './fixtures';

test.use({ viewport: { width: 360, height: 740 }, hasTouch: true, isMobile: true });

const horizontalOverflow = (page: import('@playwright/test').Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

test.describe('on a phone (360 × 740)', () => {
  test('the browser fits the screen: folders open with a tap, the toolbar and dialogs work, every page fits', async ({
    page,
    api,
    workspace,
  }, testInfo) => {
    const photos = await addFolder(api, workspace.id, 'Photos from the long summer holiday by the sea');
    await addFile(api, workspace.id, 'a rather long file name that will not fit on a phone screen.pdf', 'pdf');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    await expect(list.getByRole('option')).toHaveCount(2);
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    // The sections fit in one row, without scrolling sideways.
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.evaluate((element) => element.scrollWidth - element.clientWidth)).toBeLessThanOrEqual(0);
    await keepScreenshot(page, testInfo, 'phone-folder');

    // The toolbar's buttons are icons with names.
    await page.getByRole('button', { name: 'New folder' }).click();
    const dialog = page.getByRole('dialog', { name: 'New folder' });
    await dialog.getByLabel('Folder name').fill('Tapped');
    await keepScreenshot(page, testInfo, 'phone-new-folder-dialog');
    await dialog.getByRole('button', { name: 'Create' }).tap();
    await expect(list.getByRole('option', { name: /Tapped/ })).toBeVisible();

    // A tap on the check box selects or unselects; a tap on a row opens.
    const file = list.getByRole('option', { name: /a rather long file name/ });
    await file.locator('[data-check]').tap();
    await expect(file).toHaveAttribute('aria-selected', 'true');
    await file.locator('[data-check]').tap();
    await expect(file).toHaveAttribute('aria-selected', 'false');
    await list.getByRole('option', { name: /Photos from the long summer/ }).tap();
    await expect(page).toHaveURL(new RegExp(`/folder/${photos}$`));
    await expect(page.getByText('This folder is empty.')).toBeVisible();
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);

    for (const [link, shot] of [
      ['Search', 'phone-search'],
      ['Recent uploads', 'phone-recent'],
      ['Recycle bin', 'phone-bin'],
    ] as const) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).tap();
      await expect(page.getByRole('heading', { level: 1, name: link })).toBeVisible();
      expect(await horizontalOverflow(page), `${link} fits`).toBeLessThanOrEqual(0);
      await keepScreenshot(page, testInfo, shot);
    }
  });
});
