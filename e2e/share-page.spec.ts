/**
 * The public share page, /s/:code, as a visitor sees it: in a browser context of its own, never
 * logged in. The shares are made through the API by the files account, in the test's own folder.
 * The extraction code gate (wrong code, too many attempts, ?pwd= in the link), browsing a shared
 * folder (subfolders, back and forward, sorting), downloads counted against the limit, a share
 * that is gone, encrypted, or unreachable, a shared file with its cover, link previews in the
 * raw HTML, and a phone.
 */
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContextOptions, Download, Page } from '@playwright/test';
import { addFile, addFolder, call, shareItem, unshareItem, uploadShareImage } from './files-api';
import { zipEntries } from './zip-entries';
import { expect, expectNoSeriousViolations, keepScreenshot, test } from './fixtures';
import { BASE_URL_VARIABLE } from './service';

const CODE = 'Ab12cd';
/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

const NOTES = 'the notes';
const BIG = 'b'.repeat(2000);
const MID = 'c'.repeat(300);

/** A page in a new browser context: no session, no storage, as someone who was sent the link. */
async function visitorPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext({ baseURL: process.env[BASE_URL_VARIABLE], ...options });
  return context.newPage();
}

const visitorTest = test.extend<{ visitor: Page }>({
  visitor: async ({ browser }, use) => {
    const page = await visitorPage(browser);
    await use(page);
    await page.context().close();
  },
});

/**
 * A folder "Holiday …" in the workspace: the subfolder "Day one" (with beach.txt) and three files
 * of different sizes, shared with an extraction code and the given download limit.
 */
async function sharedHoliday(api: Parameters<typeof addFolder>[0], workspace: number, downValue = 0) {
  const name = `Holiday ${workspace}`;
  const folder = await addFolder(api, workspace, name);
  const dayOne = await addFolder(api, folder, 'Day one');
  await addFile(api, dayOne, 'beach.txt', 'sand');
  await addFile(api, folder, 'a-notes.txt', NOTES);
  await addFile(api, folder, 'b-big.txt', BIG);
  await addFile(api, folder, 'c-mid.txt', MID);
  const share = await shareItem(api, { folder }, { downpwd: CODE, downValue, description: 'Photos and notes from the lake.' });
  return { name, folder, dayOne, ...share };
}

/** Enters the extraction code at the gate. */
async function enterCode(page: Page, code: string) {
  await page.getByLabel('Extraction code', { exact: true }).fill(code);
  await page.getByRole('button', { name: 'Open' }).click();
}

const listOf = (page: Page, folder: string) => page.getByRole('listbox', { name: `Contents of ${folder}` });

async function downloadedText(download: Download): Promise<string> {
  return readFile(await download.path(), 'utf8');
}

visitorTest.describe('the share page', () => {
  visitorTest('a protected share asks for its code: a wrong one is refused and the field stays; the right one opens it, and a reload does not ask again', async ({
    api,
    workspace,
    visitor,
  }, testInfo) => {
    const share = await sharedHoliday(api, workspace.id);
    await visitor.goto(`/s/${share.code}`);

    await expect(visitor.getByRole('heading', { level: 1, name: 'Enter the extraction code' })).toBeVisible();
    const field = visitor.getByLabel('Extraction code', { exact: true });
    await expect(field).toBeFocused();
    // Nothing of the share shows before the code.
    await expect(visitor.getByText(share.name)).toHaveCount(0);
    await keepScreenshot(visitor, testInfo, 'share-gate');
    await expectNoSeriousViolations(visitor, testInfo, 'share-gate');

    await enterCode(visitor, 'ab12CD');
    const wrong = visitor.getByRole('alert').filter({ hasText: 'That extraction code is not right' });
    await expect(wrong).toBeVisible();
    await expect(field).toHaveValue('ab12CD');
    await expect(field).toBeFocused();
    await expect(field).toHaveAttribute('aria-invalid', 'true');
    await expectNoSeriousViolations(visitor, testInfo, 'share-gate-wrong');
    await visitor.emulateMedia({ colorScheme: 'dark' });
    await expectNoSeriousViolations(visitor, testInfo, 'share-gate-wrong-dark');
    await visitor.emulateMedia({ colorScheme: 'light' });

    await field.fill(CODE);
    await field.press('Enter');
    await expect(visitor.getByRole('heading', { level: 1, name: share.name })).toBeVisible();
    await expect(visitor.getByText('Photos and notes from the lake.')).toBeVisible();
    await expect(listOf(visitor, share.name).getByRole('option')).toHaveCount(4);
    await expect(visitor).toHaveTitle(`${share.name} · Files`);

    await visitor.reload();
    await expect(listOf(visitor, share.name).getByRole('option')).toHaveCount(4);
    await expect(visitor.getByLabel('Extraction code', { exact: true })).toHaveCount(0);
  });

  visitorTest('a link with ?pwd= opens the share at once and the code leaves the address; a wrong one asks again', async ({ api, workspace, visitor }) => {
    const share = await sharedHoliday(api, workspace.id);
    await visitor.goto(`/s/${share.code}?pwd=${CODE}`);
    await expect(listOf(visitor, share.name).getByRole('option')).toHaveCount(4);
    await expect(visitor).toHaveURL(new RegExp(`/s/${share.code}$`));
    await expect(visitor.getByLabel('Extraction code', { exact: true })).toHaveCount(0);

    const other = await visitorPage(visitor.context().browser()!);
    await other.goto(`/s/${share.code}?pwd=wrong1`);
    await expect(other.getByRole('alert').filter({ hasText: 'That extraction code is not right' })).toBeVisible();
    await expect(other.getByLabel('Extraction code', { exact: true })).toHaveValue('wrong1');
    await expect(other).toHaveURL(new RegExp(`/s/${share.code}$`));
    await other.context().close();
  });

  visitorTest('a shared folder is browsed: into a subfolder and back with the breadcrumbs and the history, and sorted, all in the address', async ({
    api,
    workspace,
    visitor,
  }, testInfo) => {
    const share = await sharedHoliday(api, workspace.id);
    await visitor.goto(`/s/${share.code}?pwd=${CODE}`);
    const top = listOf(visitor, share.name);
    await expect(top.getByRole('option')).toHaveText([/Day one/, /a-notes\.txt/, /b-big\.txt/, /c-mid\.txt/]);
    await expectNoSeriousViolations(visitor, testInfo, 'share-folder');
    await keepScreenshot(visitor, testInfo, 'share-folder');
    await visitor.emulateMedia({ colorScheme: 'dark' });
    await expectNoSeriousViolations(visitor, testInfo, 'share-folder-dark');
    await keepScreenshot(visitor, testInfo, 'share-folder-dark');
    await visitor.emulateMedia({ colorScheme: 'light' });

    await top.getByRole('option', { name: /Day one/ }).dblclick();
    await expect(visitor).toHaveURL(new RegExp(`dir=${share.dayOne}`));
    await expect(visitor.getByRole('heading', { level: 2, name: 'Day one' })).toBeFocused();
    await expect(listOf(visitor, 'Day one').getByRole('option')).toHaveText([/beach\.txt/]);
    const crumbs = visitor.getByRole('navigation', { name: 'Breadcrumb' });
    await expect(crumbs.getByRole('link', { name: share.name })).toBeVisible();

    await visitor.goBack();
    await expect(top.getByRole('option')).toHaveCount(4);
    await visitor.goForward();
    await expect(listOf(visitor, 'Day one').getByRole('option')).toHaveText([/beach\.txt/]);
    // A reload keeps the folder and its breadcrumbs.
    await visitor.reload();
    await expect(crumbs.getByRole('link', { name: share.name })).toBeVisible();
    await crumbs.getByRole('link', { name: share.name }).click();
    await expect(top.getByRole('option')).toHaveCount(4);
    await expect(visitor).not.toHaveURL(/dir=/);

    // Backspace goes up, Enter opens.
    await top.getByRole('option', { name: /Day one/ }).click();
    await visitor.keyboard.press('Enter');
    await expect(listOf(visitor, 'Day one')).toBeVisible();
    await visitor.keyboard.press('Backspace');
    await expect(top).toBeVisible();

    // Sorting: the visitor's keys only, the order in the address, folders first.
    const sortBy = visitor.getByLabel('Sort by');
    await expect(sortBy.getByRole('option')).toHaveText(['Name', 'Modified', 'Size']);
    await sortBy.selectOption('size');
    await expect(visitor).toHaveURL(/order=size&desc=1/);
    await expect(top.getByRole('option')).toHaveText([/Day one/, /b-big\.txt/, /c-mid\.txt/, /a-notes\.txt/]);
    await visitor.getByRole('button', { name: 'Sort order: Descending' }).click();
    await expect(top.getByRole('option')).toHaveText([/Day one/, /a-notes\.txt/, /c-mid\.txt/, /b-big\.txt/]);
    // The order is kept when going into a folder.
    await top.getByRole('option', { name: /Day one/ }).dblclick();
    await expect(visitor).toHaveURL(new RegExp(`dir=${share.dayOne}&order=size&desc=0`));
  });

  visitorTest('downloads count against the limit: two downloads with the right content, then the share says its limit is reached', async ({
    api,
    workspace,
    visitor,
  }, testInfo) => {
    const share = await sharedHoliday(api, workspace.id, 2);
    await visitor.goto(`/s/${share.code}?pwd=${CODE}`);
    const top = listOf(visitor, share.name);
    await expect(visitor.getByTestId('downloads-left')).toHaveText('2 of 2 downloads left');

    // Nothing selected: the button takes the whole folder. Select a file and press Download.
    await expect(visitor.getByRole('button', { name: 'Download all' })).toBeEnabled();
    const download = visitor.getByRole('button', { name: 'Download', exact: true });
    await top.getByRole('option', { name: /a-notes\.txt/ }).click();
    const [first] = await Promise.all([visitor.waitForEvent('download'), download.click()]);
    expect(first.suggestedFilename()).toBe('a-notes.txt');
    expect(await downloadedText(first)).toBe(NOTES);
    await expect(visitor.getByTestId('downloads-left')).toHaveText('1 of 2 downloads left');
    await expect(visitor.getByRole('status').filter({ hasText: 'Downloading “a-notes.txt”.' })).toBeVisible();

    // Opening a file previews it; a text file's preview gives the whole file, so it counts too (docs/sharing.md).
    await top.getByRole('option', { name: /b-big\.txt/ }).dblclick();
    const viewer = visitor.getByRole('dialog', { name: /^b-big\.txt/ });
    await expect(viewer.locator('pre')).toContainText(BIG.slice(0, 40));
    await visitor.keyboard.press('Escape');

    await expect(visitor.getByRole('heading', { name: 'This share has reached its download limit' })).toBeVisible();
    await expect(visitor.getByText('The owner allowed 2 downloads, and all of them have been used.', { exact: false })).toBeVisible();
    await expect(visitor.getByTestId('downloads-left')).toHaveText('0 of 2 downloads left');
    await expect(top).toHaveCount(0);
    await expectNoSeriousViolations(visitor, testInfo, 'share-limit');

    // A new visit sees the limit up front.
    await visitor.reload();
    await expect(visitor.getByRole('heading', { name: 'This share has reached its download limit' })).toBeVisible();
  });

  visitorTest('Download all gives the shared folder as one ZIP, counted as one download', async ({ api, workspace, visitor }) => {
    const share = await sharedHoliday(api, workspace.id, 2);
    await visitor.goto(`/s/${share.code}?pwd=${CODE}`);
    await expect(listOf(visitor, share.name).getByRole('option', { name: /a-notes\.txt/ })).toBeVisible();
    const [zip] = await Promise.all([visitor.waitForEvent('download'), visitor.getByRole('button', { name: 'Download all' }).click()]);
    expect(zip.suggestedFilename()).toBe(`${share.name}.zip`);
    const top = `${share.name}/`;
    expect(await zipEntries(await zip.path())).toEqual(
      [top, `${top}Day one/`, `${top}Day one/beach.txt`, `${top}a-notes.txt`, `${top}b-big.txt`, `${top}c-mid.txt`].sort(),
    );
    await expect(visitor.getByTestId('downloads-left')).toHaveText('1 of 2 downloads left');
  });

  visitorTest('an open file share shows its name, type, size, description and cover image, and downloads with one button', async ({
    api,
    workspace,
    visitor,
  }, testInfo) => {
    const fid = await addFile(api, workspace.id, 'report.pdf', 'p'.repeat(1536));
    const { code } = await shareItem(api, { file: fid }, { description: 'The yearly report.\nSecond line.' });
    await uploadShareImage(api, fid, PNG);
    await visitor.goto(`/s/${code}`);

    await expect(visitor.getByRole('heading', { level: 1, name: 'report.pdf' })).toBeVisible();
    await expect(visitor.getByText('Shared file', { exact: true })).toBeVisible();
    await expect(visitor.getByText('1.5 KB', { exact: true })).toBeVisible();
    await expect(visitor.getByText(/The yearly report\.\s+Second line\./)).toBeVisible();
    const cover = visitor.getByRole('img', { name: 'Cover image of report.pdf' });
    await expect(cover).toBeVisible();
    expect(await cover.evaluate((image: HTMLImageElement) => image.naturalWidth)).toBe(1);
    await expectNoSeriousViolations(visitor, testInfo, 'share-file');
    await keepScreenshot(visitor, testInfo, 'share-file');

    const [download] = await Promise.all([visitor.waitForEvent('download'), visitor.getByRole('button', { name: 'Download (1.5 KB)' }).click()]);
    expect(download.suggestedFilename()).toBe('report.pdf');
    expect(await downloadedText(download)).toBe('p'.repeat(1536));
  });

  visitorTest('a share that was unshared says it no longer exists', async ({ api, workspace, visitor }, testInfo) => {
    const fid = await addFile(api, workspace.id, 'gone.txt', 'gone');
    const { code } = await shareItem(api, { file: fid });
    await visitor.goto(`/s/${code}`);
    await expect(visitor.getByRole('heading', { level: 1, name: 'gone.txt' })).toBeVisible();

    await unshareItem(api, { file: fid });
    await visitor.reload();
    await expect(visitor.getByRole('heading', { level: 1, name: 'This share no longer exists or the link is wrong' })).toBeVisible();
    await expect(visitor.getByText('gone.txt')).toHaveCount(0);
    await expectNoSeriousViolations(visitor, testInfo, 'share-not-found');
  });

  visitorTest('a share whose file the owner encrypted says it is encrypted', async ({ api, workspace, visitor }, testInfo) => {
    const fid = await addFile(api, workspace.id, 'locked.txt', 'locked');
    const { code } = await shareItem(api, { file: fid });
    await call(api, 'FileEncrypt', { fid, password: 'correct horse', password_tip: 'the horse' });
    await visitor.goto(`/s/${code}`);
    await expect(visitor.getByRole('heading', { level: 1, name: 'This share is encrypted' })).toBeVisible();
    // The owner's password hint is not for visitors.
    await expect(visitor.getByText('the horse')).toHaveCount(0);
    await expectNoSeriousViolations(visitor, testInfo, 'share-encrypted');
  });

  visitorTest('an unreachable service is said plainly, and Try again opens the share', async ({ api, workspace, visitor }, testInfo) => {
    const fid = await addFile(api, workspace.id, 'offline.txt', 'offline');
    const { code } = await shareItem(api, { file: fid });
    await visitor.route('**/ShareService.asmx/ShareOpen', (route) => route.abort('internetdisconnected'));
    await visitor.goto(`/s/${code}`);
    await expect(visitor.getByRole('heading', { level: 1, name: 'Cannot reach the service' })).toBeVisible({ timeout: 15_000 });
    await expectNoSeriousViolations(visitor, testInfo, 'share-network');

    await visitor.unroute('**/ShareService.asmx/ShareOpen');
    await visitor.getByRole('button', { name: 'Try again' }).click();
    await expect(visitor.getByRole('heading', { level: 1, name: 'offline.txt' })).toBeVisible();
  });

  visitorTest('too many wrong codes: the form says how long to wait, and Open waits', async ({ api, workspace, visitor }, testInfo) => {
    const fid = await addFile(api, workspace.id, 'guarded.txt', 'guarded');
    const { code } = await shareItem(api, { file: fid }, { downpwd: CODE });
    await visitor.goto(`/s/${code}`);
    const field = visitor.getByLabel('Extraction code', { exact: true });
    // Five wrong codes block this share for this address (operations/accounts/throttle.ts shareRules.pair).
    for (let attempt = 1; attempt <= 5; attempt++) {
      await enterCode(visitor, `wrong${attempt}`);
      await expect(visitor.getByRole('alert').filter({ hasText: 'That extraction code is not right' })).toBeVisible();
      await expect(field).toBeFocused();
    }
    await enterCode(visitor, CODE);
    const throttled = visitor.getByRole('alert').filter({ hasText: 'Too many attempts' });
    await expect(throttled).toContainText(/wait (1 minute|\d+ seconds) before trying again/);
    await expect(visitor.getByRole('button', { name: /^Wait \d+ s$/ })).toBeDisabled();
    await expect(field).toHaveValue(CODE);
    await expectNoSeriousViolations(visitor, testInfo, 'share-throttled');
  });

  visitorTest('link previews: the raw HTML of a share page carries its title and Open Graph tags, and noindex', async ({ api, workspace, request }) => {
    const fid = await addFile(api, workspace.id, 'preview.pdf', 'x'.repeat(2048));
    const open = await shareItem(api, { file: fid }, { description: 'Read me & enjoy' });
    const image = await uploadShareImage(api, fid, PNG);
    const guarded = await sharedHoliday(api, workspace.id);

    const page = await request.get(`/s/${open.code}`);
    expect(page.status()).toBe(200);
    expect(page.headers()['x-robots-tag']).toBe('noindex');
    const html = await page.text();
    expect(html).toContain('<title>preview.pdf · Files</title>');
    expect(html).toContain('<meta property="og:title" content="preview.pdf" />');
    expect(html).toContain('<meta property="og:description" content="Shared file · 2 KB — Read me &#38; enjoy" />');
    expect(html).toContain(`<meta property="og:url" content="${open.url}" />`);
    expect(html).toContain(`<meta property="og:image" content="${image}" />`);
    expect(html).toContain('<meta property="og:site_name" content="Files" />');
    expect(html).toContain('<meta name="twitter:card" content="summary_large_image" />');
    expect(html).toContain('<meta name="robots" content="noindex" />');
    expect(html).toContain('<div id="root"></div>');

    const protectedHtml = await (await request.get(`/s/${guarded.code}?pwd=${CODE}`)).text();
    expect(protectedHtml).toContain('<meta property="og:title" content="Shared files — extraction code required" />');
    expect(protectedHtml).not.toContain(guarded.name);
    expect(protectedHtml).not.toContain('lake');
  });

  visitorTest('on a phone (375 px) the share page fits: the code, a tap into a subfolder, a tap to preview and download', async ({ api, workspace, browser }, testInfo) => {
    const share = await sharedHoliday(api, workspace.id);
    const phone = await visitorPage(browser, { viewport: { width: 375, height: 740 }, hasTouch: true, isMobile: true });
    const overflow = () => phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

    await phone.goto(`/s/${share.code}`);
    await expect(phone.getByLabel('Extraction code', { exact: true })).toBeVisible();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await keepScreenshot(phone, testInfo, 'phone-share-gate');
    await phone.getByLabel('Extraction code', { exact: true }).fill(CODE);
    await phone.getByRole('button', { name: 'Open' }).tap();

    const top = listOf(phone, share.name);
    await expect(top.getByRole('option')).toHaveCount(4);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await keepScreenshot(phone, testInfo, 'phone-share-folder');
    await top.getByRole('option', { name: /Day one/ }).tap();
    const dayOne = listOf(phone, 'Day one');
    await expect(dayOne.getByRole('option')).toHaveCount(1);
    // A tap opens the file in the viewer, whose Download button downloads it.
    await dayOne.getByRole('option', { name: /beach\.txt/ }).tap();
    const viewer = phone.getByRole('dialog', { name: /^beach\.txt/ });
    await expect(viewer.locator('pre')).toHaveText('sand');
    const [download] = await Promise.all([phone.waitForEvent('download'), viewer.getByRole('button', { name: 'Download' }).tap()]);
    expect(await downloadedText(download)).toBe('sand');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await phone.context().close();
  });
});
