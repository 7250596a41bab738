/**
 * The built app under its Content-Security-Policy: a journey through what loads scripts, styles,
 * images, workers and connections (log in, the folder list, an upload with its hash worker, the
 * share dialog with a cover image previewed from a blob: URL, the share page as a visitor, with
 * its cover image) records every CSP violation the browser reports; there must be none. A control
 * injects an inline script, to show that violations are seen at all.
 */
import type { Page } from '@playwright/test';
import { addFile, shareItem, uploadShareImage } from './files-api';
import { expect, folderList, test } from './fixtures';
import { BASE_URL_VARIABLE, E2E_ACCOUNT, E2E_PASSWORD } from './service';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** Starts recording violations (DOM events and console messages) on every document of the page. */
function recordViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) seen.push(`console: ${message.text()}`);
  });
  void page.exposeFunction('__cspViolation', (text: string) => seen.push(text));
  void page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { __cspViolation(text: string): void }).__cspViolation(`${event.violatedDirective} blocked ${event.blockedURI} at ${event.sourceFile}:${event.lineNumber}`);
    });
  });
  return seen;
}

test('the logged-in app and the login page run without a CSP violation', async ({ page, api, workspace }) => {
  const violations = recordViolations(page);
  const response = await page.goto(workspace.url);
  expect(response?.headers()['content-security-policy']).toContain("style-src 'self';");
  await expect(page.getByRole('heading', { name: workspace.name, level: 1 })).toBeVisible();
  const list = folderList(page, workspace.name);
  // An upload: the hash worker (worker-src), tus over fetch (connect-src).
  await page.getByTestId('upload-files-input').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('some notes') });
  await expect(list.getByRole('option', { name: /notes\.txt/ })).toBeVisible({ timeout: 20_000 });
  // The share dialog, and a cover image previewed from a blob: URL (img-src).
  await list.getByRole('option', { name: /notes\.txt/ }).click();
  await page.getByRole('button', { name: 'More actions' }).click();
  await page.getByRole('menuitem', { name: 'Share…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Share “notes.txt”' });
  await dialog.getByLabel('Cover image').setInputFiles({ name: 'cover.png', mimeType: 'image/png', buffer: PNG });
  const preview = dialog.getByRole('img', { name: 'New cover image' });
  await expect(preview).toBeVisible();
  await expect.poll(() => preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
  await page.keyboard.press('Escape');
  // Log out; the login page.
  await page.getByRole('banner').getByRole('button', { name: 'Log out' }).click();
  await page.getByLabel(/Account name or ID/).fill(E2E_ACCOUNT);
  await page.getByLabel(/^Password$/).fill(E2E_PASSWORD);
  await page.getByLabel(/^Password$/).press('Enter');
  await expect(page.getByTestId('account-name')).toHaveText(E2E_ACCOUNT);
  // Styles applied: the stylesheet loaded (Tailwind sets the body's margin to 0).
  expect(await page.evaluate(() => getComputedStyle(document.body).margin)).toBe('0px');
  expect(violations).toEqual([]);
  void api;
});

test('the share page, with its cover image and a download, runs without a CSP violation', async ({ browser, api, workspace }) => {
  const fid = await addFile(api, workspace.id, 'shared.txt', 'shared bytes');
  const share = await shareItem(api, { file: fid }, { downpwd: 'Ab12cd', description: 'for the CSP check' });
  await uploadShareImage(api, fid, PNG);
  const context = await browser.newContext({ baseURL: process.env[BASE_URL_VARIABLE] });
  const page = await context.newPage();
  const violations = recordViolations(page);
  await page.goto(`${new URL(share.url).pathname}?pwd=Ab12cd`);
  await expect(page.getByText('shared.txt').first()).toBeVisible();
  const cover = page.getByRole('img').first();
  await expect.poll(() => cover.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: /Download/ }).first().click();
  expect(await (await download).failure()).toBeNull();
  expect(violations).toEqual([]);
  await context.close();
});

test('control: an inline script is refused, and the refusal is seen', async ({ page, workspace }) => {
  const violations = recordViolations(page);
  await page.goto(workspace.url);
  await expect(page.getByRole('heading', { name: workspace.name, level: 1 })).toBeVisible();
  const ran = await page.evaluate(() => {
    const script = document.createElement('script');
    script.textContent = 'window.__inlineRan = true';
    document.head.append(script);
    return (window as unknown as { __inlineRan?: boolean }).__inlineRan === true;
  });
  expect(ran).toBe(false);
  await expect.poll(() => violations.length).toBeGreaterThan(0);
});
