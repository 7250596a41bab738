/**
 * Direct links in the browser against the real service: made from the actions menu, copied (the
 * clipboard read back), opened for the file's bytes; the links view with each link's downloads;
 * removal after asking, after which the link answers 404; folders and encrypted files refused
 * with the reason; axe scans of the dialog and the view; a phone.
 */
import type { Locator, Page } from '@playwright/test';
import { addFile, addFolder, call, useSessionIn } from './files-api';
import { expect, expectNoSeriousViolations, filterView, folderList, keepScreenshot, test } from './fixtures';

test.use({ permissions: ['clipboard-read', 'clipboard-write'] });

const LINK_URL = /^https?:\/\/[^/]+\/l\/[A-Za-z0-9_-]{22}\/[^/]+$/;

/** FileLink through the API; answers the URL. */
async function linkFile(api: Parameters<typeof call>[0], fid: number): Promise<string> {
  return (await call(api, 'FileLink', { fid })).url;
}

const readClipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

/** Selects one item of the folder's list and opens the actions menu. */
async function openMenuFor(page: Page, list: Locator, name: RegExp) {
  await list.getByRole('option', { name }).click();
  await page.getByRole('button', { name: 'More actions' }).click();
  return page.getByRole('menu');
}

const notices = (page: Page) => page.getByRole('region', { name: 'Notifications' });
const linksList = (page: Page) => page.getByRole('list', { name: 'Linked files' });
const linkRow = (page: Page, name: string) => linksList(page).getByRole('listitem').filter({ hasText: name });

test.describe('direct links', () => {
  test('a file gets a direct link from its menu; the link is copied, and opening it downloads the file', async ({ page, api, workspace }, testInfo) => {
    const name = `notes ${workspace.id}.txt`;
    const content = `the notes of ${workspace.id}\n`;
    await addFile(api, workspace.id, name, content);
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    const menu = await openMenuFor(page, list, new RegExp(name));
    // A file without a link can get one, and has none to copy or remove.
    await expect(menu.getByRole('menuitem', { name: 'Copy link' })).toHaveCount(0);
    await expect(menu.getByRole('menuitem', { name: 'Remove link' })).toHaveCount(0);
    await menu.getByRole('menuitem', { name: 'Create link' }).click();

    const dialog = page.getByRole('dialog', { name: `Link to “${name}”` });
    const field = dialog.getByRole('textbox', { name: `Link to ${name}` });
    await expect(field).toHaveValue(LINK_URL);
    const url = await field.inputValue();
    expect(decodeURIComponent(url)).toContain(`/${name}`);
    // Once the link is there, the keyboard is on Copy.
    await expect(dialog.getByRole('button', { name: 'Copy link' })).toBeFocused();
    await expectNoSeriousViolations(page, testInfo, 'link-dialog');
    await keepScreenshot(page, testInfo, 'link-dialog');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectNoSeriousViolations(page, testInfo, 'link-dialog-dark');
    await keepScreenshot(page, testInfo, 'link-dialog-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    await page.keyboard.press('Enter');
    await expect(dialog.getByRole('button', { name: 'Copied' })).toBeVisible();
    await expect(dialog.getByRole('status').filter({ hasText: 'Link copied.' })).toBeAttached();
    await expect(notices(page).getByText('Link copied.')).toBeVisible();
    expect(await readClipboard(page)).toBe(url);

    // Anyone with the link gets the bytes: the request carries no session.
    const response = await page.request.get(url);
    expect(response.status()).toBe(200);
    expect(await response.text()).toBe(content);
    expect(response.headers()['content-disposition']).toContain('attachment');

    await dialog.getByRole('button', { name: 'Done' }).click();
    await expect(dialog).toBeHidden();
    // The listing says the file has a link now; its menu copies it at once.
    const option = list.getByRole('option', { name: new RegExp(name) });
    await expect(option.getByText('Link', { exact: true })).toBeVisible();
    await page.evaluate(() => navigator.clipboard.writeText(''));
    const linkedMenu = await openMenuFor(page, list, new RegExp(name));
    await expect(linkedMenu.getByRole('menuitem', { name: 'Show link' })).toBeVisible();
    await linkedMenu.getByRole('menuitem', { name: 'Copy link' }).click();
    await expect.poll(() => readClipboard(page)).toBe(url);

    // "Show link" shows the same link without making a new one.
    await page.getByRole('button', { name: 'More actions' }).click();
    await page.getByRole('menu').getByRole('menuitem', { name: 'Show link' }).click();
    await expect(page.getByRole('dialog', { name: `Link to “${name}”` }).getByRole('textbox')).toHaveValue(url);
    await page.keyboard.press('Escape');
  });

  test('removing a link from the menu asks first; then the link answers 404', async ({ page, api, workspace }) => {
    const name = `plan ${workspace.id}.txt`;
    const fid = await addFile(api, workspace.id, name, 'the plan');
    const url = await linkFile(api, fid);
    expect((await page.request.get(url)).status()).toBe(200);
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    const menu = await openMenuFor(page, list, new RegExp(name));
    await menu.getByRole('menuitem', { name: 'Remove link' }).click();
    const confirm = page.getByRole('alertdialog', { name: `Remove the link to “${name}”?` });
    await expect(confirm).toContainText('whoever has it can no longer download the file');
    await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await confirm.getByRole('button', { name: 'Remove link' }).click();
    await expect(confirm).toBeHidden();
    await expect(page.getByText(`Removed the link to “${name}”.`)).toBeVisible();

    expect((await page.request.get(url)).status()).toBe(404);
    await expect(list.getByRole('option', { name: new RegExp(name) }).getByText('Link', { exact: true })).toHaveCount(0);
  });

  test('the links view lists each linked file with its folder and size, and counts the downloads of its link', async ({
    page,
    api,
    workspace,
  }, testInfo) => {
    const docs = await addFolder(api, workspace.id, 'Docs');
    const small = `small ${workspace.id}.txt`;
    const large = `large ${workspace.id}.txt`;
    const smallUrl = await linkFile(api, await addFile(api, docs, small, 'tiny'));
    await linkFile(api, await addFile(api, docs, large, 'x'.repeat(5000)));

    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Links' }).click();
    await expect(page).toHaveURL(/\/links$/);
    await filterView(page, String(workspace.id));
    await expect(page.getByRole('heading', { level: 1, name: 'Links' })).toBeVisible();
    const row = linkRow(page, small);
    await expect(row).toContainText(`/${workspace.name}/Docs`);
    await expect(row).toContainText('4 B');
    await expect(row).toContainText(smallUrl);
    await expect(row).toContainText('0 downloads');

    // A download through the link counts; Refresh shows it.
    const download = await page.request.get(smallUrl);
    expect(await download.text()).toBe('tiny');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect(row).toContainText('1 download');

    // Copy, from the row.
    await row.getByRole('button', { name: `Copy link to ${small}` }).click();
    await expect(notices(page).getByText('Link copied.')).toBeVisible();
    expect(await readClipboard(page)).toBe(smallUrl);
    await expect(row.getByRole('link', { name: `Open the link to ${small}` })).toHaveAttribute('href', smallUrl);

    await expectNoSeriousViolations(page, testInfo, 'links-view');
    await keepScreenshot(page, testInfo, 'links-view');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectNoSeriousViolations(page, testInfo, 'links-view-dark');
    await keepScreenshot(page, testInfo, 'links-view-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // The service sorts: by size, largest first, kept in the address.
    await page.getByRole('button', { name: 'Size' }).click();
    await expect(page).toHaveURL(/order=size&desc=1/);
    const names = linksList(page).getByRole('listitem');
    await expect(async () => {
      const texts = await names.allTextContents();
      const largeAt = texts.findIndex((text) => text.includes(large));
      const smallAt = texts.findIndex((text) => text.includes(small));
      expect(largeAt).toBeGreaterThanOrEqual(0);
      expect(largeAt).toBeLessThan(smallAt);
    }).toPass();

    await row.getByRole('link', { name: `/${workspace.name}/Docs` }).click();
    await expect(page).toHaveURL(new RegExp(`/folder/${docs}$`));
    await expect(folderList(page, 'Docs').getByRole('option', { name: new RegExp(small) })).toHaveAttribute('aria-selected', 'true');
  });

  test('a link removed in the links view answers 404 and leaves the view', async ({ page, api, workspace }) => {
    const name = `gone ${workspace.id}.txt`;
    const url = await linkFile(api, await addFile(api, workspace.id, name, 'soon gone'));
    await page.goto('/links');
    await filterView(page, String(workspace.id));
    const row = linkRow(page, name);
    await row.getByRole('button', { name: `Remove link to ${name}` }).click();
    const confirm = page.getByRole('alertdialog', { name: `Remove the link to “${name}”?` });
    await confirm.getByRole('button', { name: 'Remove link' }).click();
    await expect(confirm).toBeHidden();
    await expect(row).toHaveCount(0);
    // Focus does not fall out of the page with the row: the next row's Copy (or the heading, if none is left).
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.id))
      .toMatch(/^Copy link to |^links-title$/);
    expect((await page.request.get(url)).status()).toBe(404);
    await page.reload();
    await expect(page.getByRole('heading', { level: 1, name: 'Links' })).toBeVisible();
    await filterView(page, String(workspace.id));
    await expect(linkRow(page, name)).toHaveCount(0);
  });

  test('folders cannot be linked: the menu entry is disabled and says why; with files, the folders are left out', async ({ page, api, workspace }) => {
    const folderName = `Photos ${workspace.id}`;
    await addFolder(api, workspace.id, folderName);
    const fileName = `list ${workspace.id}.txt`;
    await addFile(api, workspace.id, fileName, 'a list');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    const menu = await openMenuFor(page, list, new RegExp(folderName));
    const create = menu.getByRole('menuitem', { name: 'Create link' });
    await expect(create).toHaveAttribute('aria-disabled', 'true');
    await expect(create).toHaveAttribute('title', 'Folders cannot have a direct link; only files can.');
    await expect(create).toHaveAccessibleDescription('Folders cannot have a direct link; only files can.');
    // Playwright does not click disabled items by itself; a user still can.
    await create.click({ force: true });
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await page.keyboard.press('Escape');

    // A folder and a file: the file gets its link, and the dialog says the folder was left out.
    await list.getByRole('option', { name: new RegExp(fileName) }).click({ modifiers: ['ControlOrMeta'] });
    await page.getByRole('button', { name: 'More actions' }).click();
    await page.getByRole('menu').getByRole('menuitem', { name: 'Create link' }).click();
    const dialog = page.getByRole('dialog', { name: `Link to “${fileName}”` });
    await expect(dialog).toContainText('Folders cannot have a direct link: 1 folder left out.');
    await expect(dialog.getByRole('textbox', { name: `Link to ${fileName}` })).toHaveValue(LINK_URL);
  });

  test('an encrypted file cannot be linked: the dialog says so, with its password hint', async ({ page, api, workspace }) => {
    const name = `secret ${workspace.id}.txt`;
    const fid = await addFile(api, workspace.id, name, 'secret');
    await call(api, 'FileEncrypt', { fid, password: 'correct horse', password_tip: 'the horse' });
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);

    const menu = await openMenuFor(page, list, new RegExp(name));
    await menu.getByRole('menuitem', { name: 'Create link' }).click();
    const dialog = page.getByRole('dialog', { name: `Link to “${name}”` });
    await expect(dialog.getByRole('alert')).toHaveText(
      `“${name}” is encrypted. Encrypted files cannot have a direct link. Decrypt the file first. Password hint: the horse`,
    );
    await expect(dialog.getByRole('textbox')).toHaveCount(0);
  });

  test('with no links, the view says how to make one', async ({ page, api }) => {
    await useSessionIn(page, api);
    // The shared test account may have links from other tests: answer an empty listing for this page.
    await page.route('**/UserService.asmx/GetLinkFiles', (route) =>
      route.fulfill({ contentType: 'text/xml; charset=utf-8', body: '<?xml version="1.0" encoding="utf-8"?>\n<result code="0" msg="" count="0" />' }),
    );
    await page.goto('/links');
    await expect(page.getByText('No file has a direct link.')).toBeVisible();
    await expect(page.getByText('To give a file one, select it and choose “Create link” in its menu.')).toBeVisible();
  });
});

test.describe('direct links on a phone (375 × 740)', () => {
  test.use({ viewport: { width: 375, height: 740 }, hasTouch: true, isMobile: true });

  const horizontalOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  test('a link is made with taps, and the links view fits the screen', async ({ page, api, workspace }, testInfo) => {
    const name = `a rather long file name for a phone screen ${workspace.id}.txt`;
    await addFile(api, workspace.id, name, 'on a phone');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    const option = list.getByRole('option', { name: new RegExp(name) });
    await option.locator('[data-check]').tap();
    await expect(option).toHaveAttribute('aria-selected', 'true');
    await page.getByRole('button', { name: 'More actions' }).tap();
    await page.getByRole('menu').getByRole('menuitem', { name: 'Create link' }).tap();
    const dialog = page.getByRole('dialog', { name: `Link to “${name}”` });
    await expect(dialog.getByRole('textbox')).toHaveValue(LINK_URL);
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    await keepScreenshot(page, testInfo, 'phone-link-dialog');
    await dialog.getByRole('button', { name: 'Done' }).tap();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Links' }).tap();
    await filterView(page, String(workspace.id));
    const row = linkRow(page, name);
    await expect(row).toContainText('0 downloads');
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    // Each row's buttons are on screen and named.
    for (const label of [`Copy link to ${name}`, `Remove link to ${name}`]) {
      const box = await row.getByRole('button', { name: label }).boundingBox();
      expect(box && box.x + box.width, label).toBeLessThanOrEqual(375);
    }
    await row.getByRole('button', { name: `Copy link to ${name}` }).tap();
    await expect(notices(page).getByText('Link copied.')).toBeVisible();
    await expectNoSeriousViolations(page, testInfo, 'phone-links-view');
    await keepScreenshot(page, testInfo, 'phone-links-view');
  });
});
