/**
 * Sharing from the file manager: the share dialog (extraction code none / typed / generated,
 * download limit, description, cover image, the link and its copy buttons, stop sharing) and the
 * shares view (/shares). The account is shared with other specs, so the shares view is always
 * searched for this test's own items by name.
 */
import type { Locator, Page } from '@playwright/test';
import { addFile, addFolder, call, type ApiSession } from './files-api';
import type { Items } from '../src/api/results';
import { expect, expectNoSeriousViolations, filterView, folderList, keepScreenshot, test } from './fixtures';

test.use({ permissions: ['clipboard-read', 'clipboard-write'] });

const SHARE_URL = /^http:\/\/[^/]+\/s\/[A-Za-z0-9_-]{22}$/;
/** An attribute of the first item (`<folder …/>` or `<file …/>`) of an answer. */
/** The share attribute of the one item a FolderShare or FileShare answered. */
const itemAttribute = (shared: Items, name: 'code' | 'url') => [...shared.folders, ...shared.files][0]?.[name] ?? '';

/** A PNG drawn on a canvas in the page. */
async function pngFromCanvas(page: Page): Promise<Buffer> {
  const dataUrl = await page.evaluate(() => {
    const canvas = document.createElement('canvas');
    canvas.width = 64;
    canvas.height = 40;
    const context = canvas.getContext('2d');
    if (!context) throw new Error('no 2d context');
    context.fillStyle = '#2563eb';
    context.fillRect(0, 0, 64, 40);
    context.fillStyle = '#fbbf24';
    context.fillRect(8, 8, 20, 20);
    return canvas.toDataURL('image/png');
  });
  return Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');
}

/** Selects an item of the folder list and opens the share dialog from the More actions menu. */
async function openShareDialog(page: Page, list: Locator, name: string): Promise<Locator> {
  await list.getByRole('option', { name: new RegExp(name) }).click();
  await page.getByRole('button', { name: 'More actions' }).click();
  await page.getByRole('menuitem', { name: 'Share…' }).click();
  const dialog = page.getByRole('dialog', { name: `Share “${name}”` });
  await expect(dialog).toBeVisible();
  return dialog;
}

const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

/** ShareDownload, as a visitor of the share page: counts one download. */
async function downloadAsVisitor(api: ApiSession, code: string, downpwd: string, fid: number): Promise<void> {
  await call(api, 'ShareDownload', { code, downpwd, fid });
}

/** The card of one shared item in the shares view. */
const shareCard = (page: Page, name: string) =>
  page.getByRole('list', { name: 'Shared items' }).getByRole('article', { name: new RegExp(`${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) });

test.describe('the share dialog', () => {
  test('a folder is shared with a typed extraction code and a limit of 2; its link is copied with and without the code', async ({
    page,
    api,
    workspace,
  }, testInfo) => {
    const name = `Reports ${workspace.id}`;
    await addFolder(api, workspace.id, name);
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    const dialog = await openShareDialog(page, list, name);

    // A new share starts with a generated code; the owner types their own instead.
    await expect(dialog.getByRole('radio', { name: 'Generate one' })).toBeChecked();
    await dialog.getByRole('radio', { name: 'Type one' }).check();
    await expect(dialog.getByLabel('Extraction code')).toBeFocused();
    await dialog.getByLabel('Extraction code').fill('Q3-team');
    await dialog.getByLabel('Download limit').fill('2');
    await dialog.getByLabel('Description').fill('Quarterly reports, final');
    await expect(dialog.getByText('24 of 500 characters')).toBeVisible();
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();

    await expect(dialog.getByRole('status').filter({ hasText: 'Shared.' })).toBeVisible();
    const link = dialog.getByRole('textbox', { name: 'Share link' });
    await expect(link).toHaveValue(SHARE_URL);
    const url = await link.inputValue();
    await expect(dialog.getByRole('button', { name: 'Copy link', exact: true })).toBeFocused();
    await expect(dialog.getByText('Extraction code:').locator('..')).toContainText('Q3-team');
    await expect(dialog.getByText('Downloads:').locator('..')).toContainText('0 of 2');
    await expect(dialog.getByRole('button', { name: 'Save', exact: true })).toBeVisible();
    await keepScreenshot(page, testInfo, 'share-dialog-shared-folder');

    await dialog.getByRole('button', { name: 'Copy link', exact: true }).click();
    await expect(dialog.getByText('Link copied')).toBeVisible();
    expect(await clipboard(page)).toBe(url);
    await dialog.getByRole('button', { name: 'Copy link with code' }).click();
    await expect.poll(() => clipboard(page)).toBe(`${url}?pwd=Q3-team`);

    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(dialog).toBeHidden();
    await expect(list.getByRole('option', { name: new RegExp(name) })).toContainText('Shared');
  });

  test('opened again, a shared item shows its link and settings; Stop sharing ends the share and clears the mark', async ({
    page,
    api,
    workspace,
  }) => {
    const name = `Plans ${workspace.id}`;
    const folder = await addFolder(api, workspace.id, name);
    const shared = await call(api, 'FolderShare', { dirids: folder, downpwd: 'x7k2', downValue: 3, description: 'the plans' });
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    await expect(list.getByRole('option', { name: new RegExp(name) })).toContainText('Shared');

    // The folder listing carries only the shared flag: the dialog looks the share up.
    const dialog = await openShareDialog(page, list, name);
    await expect(dialog.getByRole('textbox', { name: 'Share link' })).toHaveValue(itemAttribute(shared, 'url'));
    await expect(dialog.getByRole('radio', { name: 'Type one' })).toBeChecked();
    await expect(dialog.getByLabel('Extraction code')).toHaveValue('x7k2');
    await expect(dialog.getByLabel('Download limit')).toHaveValue('3');
    await expect(dialog.getByLabel('Description')).toHaveValue('the plans');
    await expect(dialog.getByRole('button', { name: 'Save', exact: true })).toBeVisible();

    await dialog.getByRole('button', { name: 'Stop sharing' }).click();
    const confirm = page.getByRole('alertdialog', { name: `Stop sharing “${name}”?` });
    await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await confirm.getByRole('button', { name: 'Stop sharing' }).click();
    await expect(confirm).toBeHidden();
    await expect(dialog).toBeHidden();
    await expect(page.getByText(`Stopped sharing “${name}”.`)).toBeVisible();
    await expect(list.getByRole('option', { name: new RegExp(name) })).not.toContainText('Shared');
  });

  test('a generated code is 4 letters or digits that are not easily confused, and New code draws another', async ({ page, api, workspace }) => {
    const name = `minutes ${workspace.id}.txt`;
    await addFile(api, workspace.id, name, 'the minutes');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    // This time from the right-click menu.
    await list.getByRole('option', { name: new RegExp(name) }).click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Share…' }).click();
    const dialog = page.getByRole('dialog', { name: `Share “${name}”` });

    const code = dialog.getByLabel('Extraction code');
    await expect(code).toHaveValue(/^[a-hjkmnp-z2-9]{4}$/);
    await expect(code).not.toBeEditable();
    const first = await code.inputValue();
    await dialog.getByRole('button', { name: 'New code' }).click();
    await expect(code).not.toHaveValue(first);
    await expect(code).toHaveValue(/^[a-hjkmnp-z2-9]{4}$/);
    const generated = await code.inputValue();

    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    await expect(dialog.getByText('Extraction code:').locator('..')).toContainText(generated);
    await dialog.getByRole('button', { name: 'Copy link with code' }).click();
    await expect.poll(() => clipboard(page)).toMatch(new RegExp(`/s/[A-Za-z0-9_-]{22}\\?pwd=${generated}$`));
  });

  test('a typed code of fewer than 4 characters and a limit that is not a whole number are refused before anything is sent', async ({
    page,
    api,
    workspace,
  }) => {
    const name = `draft ${workspace.id}.txt`;
    await addFile(api, workspace.id, name, 'draft');
    await page.goto(workspace.url);
    const dialog = await openShareDialog(page, folderList(page, workspace.name), name);
    let shareCalls = 0;
    page.on('request', (request) => {
      if (/\/FileService\.asmx\/FileShare$/.test(request.url())) shareCalls++;
    });

    await dialog.getByRole('radio', { name: 'Type one' }).check();
    await dialog.getByLabel('Extraction code').fill('abc');
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    await expect(dialog.getByText('An extraction code has at least 4 characters.')).toBeVisible();
    await expect(dialog.getByLabel('Extraction code')).toBeFocused();
    await expect(dialog.getByLabel('Extraction code')).toHaveAttribute('aria-invalid', 'true');

    await dialog.getByLabel('Extraction code').fill('abcd');
    await dialog.getByLabel('Download limit').fill('1.5');
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    await expect(dialog.getByText('Type a whole number of downloads, or leave it empty for no limit.')).toBeVisible();
    await expect(dialog.getByLabel('Download limit')).toBeFocused();
    expect(shareCalls).toBe(0);

    await dialog.getByLabel('Download limit').fill('');
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    await expect(dialog.getByText('Downloads:').locator('..')).toContainText('0, no limit');
    expect(shareCalls).toBe(1);
  });

  test('a file is shared with no code and a cover image, previewed before and after saving; a file that is no image is refused', async ({
    page,
    api,
    workspace,
  }, testInfo) => {
    const name = `poster ${workspace.id}.pdf`;
    await addFile(api, workspace.id, name, '%PDF-1.4 poster');
    await page.goto(workspace.url);
    const dialog = await openShareDialog(page, folderList(page, workspace.name), name);

    await dialog.getByRole('radio', { name: 'None' }).check();
    await expect(dialog.getByLabel('Extraction code')).toHaveCount(0);
    const cover = dialog.getByLabel('Cover image');
    await cover.setInputFiles({ name: 'cover.png', mimeType: 'image/png', buffer: Buffer.from('this is text, not a PNG') });
    await expect(dialog.getByText('That file is not a PNG, JPEG, GIF or WebP image.')).toBeVisible();
    await expect(dialog.getByRole('img', { name: 'New cover image' })).toHaveCount(0);

    await cover.setInputFiles({ name: 'cover.png', mimeType: 'image/png', buffer: await pngFromCanvas(page) });
    const preview = dialog.getByRole('img', { name: 'New cover image' });
    await expect(preview).toBeVisible();
    await expect.poll(() => preview.evaluate((image: HTMLImageElement) => image.naturalWidth)).toBe(64);
    await expect(dialog.getByText('That file is not a PNG, JPEG, GIF or WebP image.')).toHaveCount(0);
    // The service gives covers only to shares that exist: the image follows the sharing.
    const afterSharing = dialog.getByText('The file isn’t shared yet: the image is added right after “Share” has shared it.');
    await expect(afterSharing).toBeVisible();

    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    await expect(dialog.getByRole('textbox', { name: 'Share link' })).toHaveValue(SHARE_URL);
    const current = dialog.getByRole('img', { name: 'Current cover image' });
    await expect(current).toBeVisible();
    // Served by the service from the share's image URL.
    await expect(current).toHaveAttribute('src', /\/s\/image\/[0-9]+\/[A-Za-z0-9_-]+$/);
    await expect.poll(() => current.evaluate((image: HTMLImageElement) => image.naturalWidth)).toBe(64);
    await expect(dialog.getByRole('img', { name: 'New cover image' })).toHaveCount(0);
    await expect(afterSharing).toHaveCount(0);
    await expect(dialog.getByText('Extraction code:').locator('..')).toContainText('none');
    await expect(dialog.getByRole('button', { name: 'Copy link with code' })).toHaveCount(0);
    await dialog.evaluate((element) => element.scrollTo(0, element.scrollHeight));
    await keepScreenshot(page, testInfo, 'share-dialog-cover');
  });

  test('several items are shared at once with the same settings, each with its own link', async ({ page, api, workspace }) => {
    const folderName = `Slides ${workspace.id}`;
    const fileName = `notes ${workspace.id}.txt`;
    await addFolder(api, workspace.id, folderName);
    await addFile(api, workspace.id, fileName, 'notes');
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    await list.getByRole('option', { name: new RegExp(folderName) }).click();
    await list.getByRole('option', { name: new RegExp(fileName) }).click({ modifiers: ['ControlOrMeta'] });
    await page.getByRole('button', { name: 'More actions' }).click();
    await page.getByRole('menuitem', { name: 'Share…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Share 2 items' });
    // A cover belongs to one file's share.
    await expect(dialog.getByLabel('Cover image')).toHaveCount(0);
    const code = await dialog.getByLabel('Extraction code').inputValue();
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();

    const folderLink = dialog.getByRole('textbox', { name: `Link to “${folderName}”` });
    const fileLink = dialog.getByRole('textbox', { name: `Link to “${fileName}”` });
    await expect(folderLink).toHaveValue(SHARE_URL);
    await expect(fileLink).toHaveValue(SHARE_URL);
    expect(await folderLink.inputValue()).not.toBe(await fileLink.inputValue());
    await expect(dialog.getByRole('button', { name: 'Copy link with code' })).toHaveCount(2);
    await dialog.getByRole('button', { name: 'Copy link with code' }).nth(1).click();
    await expect.poll(() => clipboard(page)).toBe(`${await fileLink.inputValue()}?pwd=${code}`);
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(list.getByRole('option', { name: /Shared/ })).toHaveCount(2);
  });

  test('an encrypted folder cannot be shared, and the dialog says so', async ({ page, api, workspace }) => {
    const name = `Secret ${workspace.id}`;
    const folder = await addFolder(api, workspace.id, name);
    await call(api, 'FolderEncrypt', { dirid: folder, password: 'open sesame', password_tip: 'the usual' });
    await page.goto(workspace.url);
    const dialog = await openShareDialog(page, folderList(page, workspace.name), name);
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    await expect(dialog.getByRole('alert')).toHaveText(`Encrypted items cannot be shared. “${name}” is encrypted. Decrypt it first, then share it.`);
    await expect(dialog.getByRole('textbox', { name: 'Share link' })).toHaveCount(0);
  });
});

test.describe('the shares view', () => {
  test('lists each share with its code, limit and downloads; edits it; stops it', async ({ page, api, workspace }, testInfo) => {
    const album = `Album ${workspace.id}`;
    const folder = await addFolder(api, workspace.id, album);
    const photo = await addFile(api, folder, 'beach.jpg', 'jpeg bytes');
    const song = `song ${workspace.id}.mp3`;
    const songId = await addFile(api, workspace.id, song, 'mp3 bytes');
    const albumShare = await call(api, 'FolderShare', { dirids: folder, downpwd: 'ab12', downValue: 2, description: 'Summer, at the sea' });
    await call(api, 'FileShare', { fids: songId, downpwd: '', downValue: 0, description: '' });
    await downloadAsVisitor(api, itemAttribute(albumShare, 'code'), 'ab12', photo);

    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Shares' }).click();
    await expect(page).toHaveURL(/\/shares$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Shares' })).toBeVisible();
    await filterView(page, String(workspace.id));

    const albumCard = shareCard(page, album);
    await expect(albumCard).toContainText(`/${workspace.name}`);
    await expect(albumCard).toContainText('Extraction code:ab12');
    await expect(albumCard).toContainText('Download limit:2');
    await expect(albumCard).toContainText('Downloads:1 of 2');
    await expect(albumCard).toContainText('Summer, at the sea');
    const songCard = shareCard(page, song);
    await expect(songCard).toContainText('Extraction code:none');
    await expect(songCard).toContainText('Download limit:No limit');
    await expect(songCard).toContainText('Downloads:0, no limit');
    await expect(songCard.getByRole('button', { name: 'Copy link with code' })).toHaveCount(0);
    await keepScreenshot(page, testInfo, 'shares-view');

    await albumCard.getByRole('button', { name: 'Copy link with code' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Link copied' })).toBeVisible();
    await expect.poll(() => clipboard(page)).toBe(`${itemAttribute(albumShare, 'url')}?pwd=ab12`);

    // Edit: the dialog opens on the share's settings.
    await albumCard.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: `Share “${album}”` });
    await expect(dialog.getByLabel('Extraction code')).toHaveValue('ab12');
    await expect(dialog.getByLabel('Download limit')).toHaveValue('2');
    await dialog.getByLabel('Download limit').fill('5');
    await dialog.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(dialog.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(albumCard).toContainText('Downloads:1 of 5');
    await expect(albumCard).toContainText('Download limit:5');

    // The name leads to the item: a folder opens.
    await albumCard.getByRole('link', { name: album }).click();
    await expect(page).toHaveURL(new RegExp(`/folder/${folder}$`));
    await page.goBack();

    await songCard.getByRole('button', { name: 'Stop sharing' }).click();
    const confirm = page.getByRole('alertdialog', { name: `Stop sharing “${song}”?` });
    await confirm.getByRole('button', { name: 'Stop sharing' }).click();
    await expect(songCard).toHaveCount(0);
    await expect(page.getByRole('heading', { level: 1, name: 'Shares' })).toBeFocused();
    await expect(albumCard).toBeVisible();

    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    await expect(list.getByRole('option', { name: new RegExp(album) })).toContainText('Shared');
    await expect(list.getByRole('option', { name: new RegExp(song) })).not.toContainText('Shared');
  });

  test('says when nothing is shared', async ({ page, workspace }) => {
    await page.route('**/UserService.asmx/GetShareFiles', (route) =>
      route.fulfill({ contentType: 'text/xml', body: '<?xml version="1.0" encoding="utf-8"?><result code="0" msg="" count="0" />' }),
    );
    void workspace; // (logs the browser in)
    await page.goto('/shares');
    await expect(page.getByText('Nothing shared yet')).toBeVisible();
    await expect(page.getByRole('link', { name: 'Go to your files' })).toBeVisible();
  });
});

test.describe('sharing is accessible', () => {
  test.describe.configure({ timeout: 60_000 });

  test('the share dialog, before and after sharing, and the shares view, light and dark', async ({ page, api, workspace }, testInfo) => {
    const name = `cover ${workspace.id}.txt`;
    await addFile(api, workspace.id, name, 'text');
    await page.goto(workspace.url);
    const dialog = await openShareDialog(page, folderList(page, workspace.name), name);
    await expectNoSeriousViolations(page, testInfo, 'share-dialog-new');
    await dialog.getByRole('radio', { name: 'Type one' }).check();
    await dialog.getByLabel('Extraction code').fill('ab');
    await dialog.getByLabel('Description').fill('x'.repeat(501));
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    await expect(dialog.getByText('An extraction code has at least 4 characters.')).toBeVisible();
    await expectNoSeriousViolations(page, testInfo, 'share-dialog-invalid');
    await dialog.getByLabel('Extraction code').fill('abcd');
    await dialog.getByLabel('Description').fill('A cover for the share');
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    await expect(dialog.getByRole('textbox', { name: 'Share link' })).toBeVisible();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectNoSeriousViolations(page, testInfo, `share-dialog-shared-${scheme}`);
      await keepScreenshot(page, testInfo, `share-dialog-shared-${scheme}`);
    }
    await dialog.getByRole('button', { name: 'Stop sharing' }).click();
    await expect(page.getByRole('alertdialog')).toBeVisible();
    await expectNoSeriousViolations(page, testInfo, 'stop-sharing-confirm');
    await page.keyboard.press('Escape');
    await expect(page.getByRole('alertdialog')).toBeHidden();
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();

    await page.goto('/shares');
    await filterView(page, String(workspace.id));
    await expect(shareCard(page, name)).toBeVisible();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectNoSeriousViolations(page, testInfo, `shares-view-${scheme}`);
      await keepScreenshot(page, testInfo, `shares-view-${scheme}`);
    }
  });
});

test.describe('the shares view on a phone (375 × 740)', () => {
  test.use({ viewport: { width: 375, height: 740 }, hasTouch: true, isMobile: true });

  test('fits the screen, and its actions work with taps', async ({ page, api, workspace }, testInfo) => {
    const name = `a rather long name for a shared folder on a phone ${workspace.id}`;
    const folder = await addFolder(api, workspace.id, name);
    await call(api, 'FolderShare', { dirids: folder, downpwd: 'phone-code', downValue: 10, description: 'A description that is long enough to wrap onto a second line on a phone.' });
    await page.goto('/shares');
    await filterView(page, String(workspace.id));
    const card = shareCard(page, name);
    await expect(card).toContainText('Downloads:0 of 10');
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    const box = await card.boundingBox();
    expect(box && box.x + box.width).toBeLessThanOrEqual(375);
    await keepScreenshot(page, testInfo, 'phone-shares-view');

    // The buttons are icons with names on a phone.
    await card.getByRole('button', { name: 'Edit' }).tap();
    const dialog = page.getByRole('dialog', { name: `Share “${name}”` });
    await expect(dialog.getByLabel('Extraction code')).toHaveValue('phone-code');
    expect(await dialog.evaluate((element) => element.scrollWidth - element.clientWidth)).toBeLessThanOrEqual(0);
    await keepScreenshot(page, testInfo, 'phone-share-dialog');
    await dialog.getByRole('button', { name: 'Close' }).tap();
    await expect(dialog).toBeHidden();
  });
});
