/**
 * The file viewer (issue 21): each preview kind on the owner's folder page and on the share page,
 * by keyboard, pointer and a phone's swipe, with real files made in the test.
 */
import type { Page } from '@playwright/test';
import { addFile, shareItem, addFolder } from './files-api';
import { expect, expectNoSeriousViolations, folderList, test } from './fixtures';
import { fixture, NI_HAO_GB18030, pdf, png, wav } from './preview-files';

const viewer = (page: Page, name: string) => page.getByRole('dialog', { name: new RegExp(`^${name.replace(/[.]/g, '\\.')} \\(`) });

async function openByDoubleClick(page: Page, listName: string, name: string) {
  await folderList(page, listName).getByRole('option', { name: new RegExp(name) }).dblclick();
  const dialog = viewer(page, name);
  await expect(dialog).toBeVisible();
  return dialog;
}

test.describe('the viewer of the owner', () => {
  test('an image zooms by keys and buttons, arrow keys move between files, Escape returns to the row', async ({ page, api, workspace }, testInfo) => {
    await addFile(api, workspace.id, 'a.png', await png(400, 300, '#c00'));
    await addFile(api, workspace.id, 'b.png', await png(300, 400, '#00c'));
    await page.goto(workspace.url);
    const list = folderList(page, workspace.name);
    await list.getByRole('option', { name: /a\.png/ }).click();
    await page.keyboard.press('Enter');
    const dialog = viewer(page, 'a.png');
    await expect(dialog).toHaveAttribute('aria-modal', 'true');
    const image = dialog.getByRole('img', { name: 'a.png' });
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(400);

    const zoom = dialog.getByRole('group', { name: 'Zoom' }).locator('output');
    const fitted = await zoom.textContent();
    await page.keyboard.press('+');
    await expect(zoom).not.toHaveText(fitted!);
    const zoomed = await image.evaluate((img) => img.getBoundingClientRect().width);
    await dialog.getByRole('button', { name: 'Zoom in' }).click();
    await expect.poll(() => image.evaluate((img) => img.getBoundingClientRect().width)).toBeGreaterThan(zoomed * 1.2);
    await page.keyboard.press('0');
    await expect(zoom).toHaveText(fitted!);
    await expectNoSeriousViolations(page, testInfo, 'viewer');

    await page.keyboard.press('ArrowRight');
    await expect(viewer(page, 'b.png')).toBeVisible();
    await expect(viewer(page, 'b.png').getByRole('img', { name: 'b.png' })).toBeVisible();
    await page.keyboard.press('ArrowLeft');
    await expect(viewer(page, 'a.png')).toBeVisible();

    await page.keyboard.press('Escape');
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await expect(list).toBeFocused();
    await expect(list.getByRole('option', { name: /a\.png/ })).toHaveAttribute('aria-selected', 'true');
  });

  for (const name of ['clip.webm', 'clip.mp4']) {
    test(`a video (${name}) streams with Range and can be sought`, async ({ page, api, workspace }) => {
      await addFile(api, workspace.id, name, fixture(name));
      await page.goto(workspace.url);
      const dialog = await openByDoubleClick(page, workspace.name, name);
      const video = dialog.locator('video');
      await expect.poll(() => video.evaluate((element: HTMLVideoElement) => element.readyState)).toBeGreaterThanOrEqual(1);
      expect(await video.evaluate((element: HTMLVideoElement) => element.duration)).toBeCloseTo(2, 0);
      const sought = await video.evaluate(
        (element: HTMLVideoElement) =>
          new Promise<number>((resolve) => {
            element.addEventListener('seeked', () => resolve(element.currentTime), { once: true });
            element.currentTime = 1.5;
          }),
      );
      expect(sought).toBeCloseTo(1.5, 0);
    });
  }

  test('audio plays in an audio element', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'tone.wav', wav(1));
    await page.goto(workspace.url);
    const dialog = await openByDoubleClick(page, workspace.name, 'tone.wav');
    const audio = dialog.locator('audio');
    await expect.poll(() => audio.evaluate((element: HTMLAudioElement) => element.duration)).toBeCloseTo(1, 1);
  });

  test('a PDF is paged with pdf.js', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'two pages.pdf', pdf(2));
    await page.goto(workspace.url);
    const dialog = await openByDoubleClick(page, workspace.name, 'two pages.pdf');
    await expect(dialog.getByText('Page 1 of 2')).toBeVisible();
    await dialog.getByRole('button', { name: 'Next page' }).click();
    await expect(dialog.getByRole('img', { name: 'Page 2 of 2' })).toBeVisible();
    await expect(dialog.getByRole('button', { name: 'Next page' })).toBeDisabled();
  });

  test('a Chinese text file in GB18030 reads right, and a long one shows its first MiB with a note', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'chinese.txt', NI_HAO_GB18030);
    await addFile(api, workspace.id, 'long.log', 'line of the log\n'.repeat(80_000));
    await page.goto(workspace.url);
    const dialog = await openByDoubleClick(page, workspace.name, 'chinese.txt');
    await expect(dialog.locator('pre')).toHaveText('你好，世界');
    await expect(dialog.getByRole('note')).toHaveCount(0);
    await page.keyboard.press('ArrowRight');
    await expect(viewer(page, 'long.log').getByRole('note')).toHaveText('Showing the first 1 MiB.');
  });

  test('Markdown is rendered without its raw HTML: a script in it never runs', async ({ page, api, workspace }) => {
    const text = '# Notes\n\n<script>window.pwned = true</script>\n\n<img src=x onerror="window.pwned = true">\n\n[site](https://example.com) [bad](javascript:window.pwned=true)\n';
    await addFile(api, workspace.id, 'notes.md', text);
    await page.goto(workspace.url);
    const dialog = await openByDoubleClick(page, workspace.name, 'notes.md');
    await expect(dialog.getByRole('heading', { name: 'Notes', exact: true })).toBeVisible();
    await expect(dialog.getByText('<script>window.pwned = true</script>')).toBeVisible();
    await expect(dialog.locator('script, img')).toHaveCount(0);
    await expect(dialog.getByRole('link', { name: 'site' })).toHaveAttribute('rel', 'noopener noreferrer');
    await expect(dialog.getByRole('link', { name: 'bad' })).toHaveCount(0);
    expect(await page.evaluate(() => (window as { pwned?: boolean }).pwned)).toBeUndefined();
  });

  test('a file of another type shows its details with a Download button, from the item menu too', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'archive.zip', 'PK not really');
    await page.goto(workspace.url);
    await folderList(page, workspace.name).getByRole('option', { name: /archive\.zip/ }).click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Preview' }).click();
    const dialog = viewer(page, 'archive.zip');
    await expect(dialog.getByText('There is no preview for this type of file.', { exact: false })).toBeVisible();
    await expect(dialog.getByText(`/${workspace.name}/archive.zip`)).toBeVisible();
    const download = page.waitForEvent('download');
    await dialog.getByRole('region', { name: 'Details' }).getByRole('button', { name: 'Download' }).click();
    expect((await download).suggestedFilename()).toBe('archive.zip');
  });

  test('bytes the service will not serve inline (a PNG that is HTML) show the details instead', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'photo.png', '<html><script>window.pwned = true</script></html>');
    await page.goto(workspace.url);
    const dialog = await openByDoubleClick(page, workspace.name, 'photo.png');
    await expect(dialog.getByText('This file cannot be previewed.', { exact: false })).toBeVisible();
    await expect(dialog.getByRole('region', { name: 'Details' }).getByRole('button', { name: 'Download' })).toBeVisible();
    expect(await page.evaluate(() => (window as { pwned?: boolean }).pwned)).toBeUndefined();
  });
});

test.describe('the viewer on the share page', () => {
  test("a visitor previews a shared folder's files and a shared file", async ({ api, workspace, browser }) => {
    const folder = await addFolder(api, workspace.id, 'Holiday');
    await addFile(api, folder, 'notes.txt', 'Swim at nine.');
    await addFile(api, folder, 'tone.wav', wav(1));
    const fid = await addFile(api, workspace.id, 'report.pdf', pdf(2));
    const shared = await shareItem(api, { folder });
    const file = await shareItem(api, { file: fid });
    const visitor = await browser.newPage();
    try {
      await visitor.goto(`/s/${shared.code}`);
      await folderList(visitor, 'Holiday').getByRole('option', { name: /notes\.txt/ }).dblclick();
      await expect(viewer(visitor, 'notes.txt').locator('pre')).toHaveText('Swim at nine.');
      await visitor.keyboard.press('ArrowRight');
      const audio = viewer(visitor, 'tone.wav').locator('audio');
      await expect.poll(() => audio.evaluate((element: HTMLAudioElement) => element.duration)).toBeCloseTo(1, 1);
      await visitor.keyboard.press('Escape');

      await visitor.goto(`/s/${file.code}`);
      await visitor.getByRole('button', { name: 'Preview' }).click();
      await expect(viewer(visitor, 'report.pdf').getByText('Page 1 of 2')).toBeVisible();
    } finally {
      await visitor.close();
    }
  });
});

test('a visitor sees an image as its scaled rendition, and previewing it uses no download', async ({ api, workspace, browser }) => {
  const folder = await addFolder(api, workspace.id, 'Lake');
  await addFile(api, folder, 'lake.png', await png(300, 200, '#0a0'));
  const shared = await shareItem(api, { folder }, { downValue: 1 });
  const visitor = await browser.newPage();
  try {
    await visitor.goto(`/s/${shared.code}`);
    await folderList(visitor, 'Lake').getByRole('option', { name: /lake\.png/ }).dblclick();
    const image = viewer(visitor, 'lake.png').getByRole('img', { name: 'lake.png' });
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(300);
    await visitor.keyboard.press('Escape');
    // The one download the share allows is still there.
    await expect(folderList(visitor, 'Lake')).toBeVisible();
    await visitor.reload();
    await expect(folderList(visitor, 'Lake').getByRole('option', { name: /lake\.png/ })).toBeVisible();
  } finally {
    await visitor.close();
  }
});

test.describe('the viewer on a phone', () => {
  test.use({ viewport: { width: 360, height: 740 }, hasTouch: true, isMobile: true });

  test('a swipe moves to the next and the previous file', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'one.png', await png(300, 200, '#c60'));
    await addFile(api, workspace.id, 'two.png', await png(300, 200, '#06c'));
    await page.goto(workspace.url);
    await folderList(page, workspace.name).getByRole('option', { name: /one\.png/ }).tap();
    await expect(viewer(page, 'one.png')).toBeVisible();
    await swipe(page, -200);
    await expect(viewer(page, 'two.png')).toBeVisible();
    await swipe(page, 200);
    await expect(viewer(page, 'one.png')).toBeVisible();
  });
});

/** A one-finger horizontal swipe across the middle of the screen (touch events, as a phone sends). */
async function swipe(page: Page, dx: number) {
  const cdp = await page.context().newCDPSession(page);
  const y = 370;
  const x = dx < 0 ? 300 : 60;
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
  for (let step = 1; step <= 5; step++) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: x + (dx * step) / 5, y }] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}
