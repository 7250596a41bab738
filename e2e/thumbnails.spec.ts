/**
 * Thumbnails in the file list (small) and the grid (large), for the owner and for a share's
 * visitors: real JPEG and PNG images made here with sharp and a PDF written here, uploaded over tus;
 * a file that is no image, and a .jpg whose bytes are no image, keep their type icon.
 */
import type { Locator, Page } from '@playwright/test';
import sharp from 'sharp';
import { addFile, addFolder, shareItem } from './files-api';
import { expect, folderList, test } from './fixtures';
import { pdf } from './preview-files';
import { BASE_URL_VARIABLE } from './service';

/** A 600 × 400 picture: a gradient, so that it is a real photo-like image. */
function picture(format: 'jpeg' | 'png'): Promise<Buffer> {
  const pixels = Buffer.alloc(600 * 400 * 3);
  for (let i = 0; i < pixels.length; i += 3) {
    const x = (i / 3) % 600;
    pixels[i] = x % 256;
    pixels[i + 1] = (i / 3 / 600) % 256;
    pixels[i + 2] = 128;
  }
  return sharp(pixels, { raw: { width: 600, height: 400, channels: 3 } })[format]().toBuffer();
}

/** The natural width of the item's loaded thumbnail; 0 while it is not loaded. */
const thumbnailWidth = (item: Locator) =>
  item.locator('img[data-thumbnail]').evaluateAll((images) => {
    const image = images[0] as HTMLImageElement | undefined;
    return image?.complete ? image.naturalWidth : 0;
  });

const option = (page: Page, list: string, name: string) => folderList(page, list).getByRole('option', { name });

test.describe('thumbnails', () => {
  test('photos show small thumbnails in the list and large ones in the grid', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'beach.jpg', await picture('jpeg'));
    await addFile(api, workspace.id, 'chart.png', await picture('png'));
    await page.goto(workspace.url);

    for (const name of ['beach.jpg', 'chart.png']) {
      // small: fits 96 × 96 (a 3:2 picture is 96 wide)
      await expect.poll(() => thumbnailWidth(option(page, workspace.name, name))).toBe(96);
    }
    await page.getByRole('button', { name: 'Grid' }).click();
    for (const name of ['beach.jpg', 'chart.png']) {
      await expect.poll(() => thumbnailWidth(option(page, workspace.name, name))).toBe(384);
    }
  });

  test('opening a folder asks for its listing and the thumbnail prefix together, not one after the other', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'beach.jpg', await picture('jpeg'));
    let prefixAsked = false;
    page.on('request', (request) => void (prefixAsked ||= request.url().includes('/ThumbnailBase')));
    // The listing is answered only once the prefix has been asked for: asked after the list shows, it never would be.
    await page.route('**/GetFilesWhitPath*', async (route) => {
      await expect.poll(() => prefixAsked, { timeout: 5_000 }).toBe(true);
      await route.continue();
    });
    await page.goto(workspace.url);
    await expect.poll(() => thumbnailWidth(option(page, workspace.name, 'beach.jpg'))).toBe(96);
  });

  test('a PDF shows its first page: small in the list, large in the grid', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'letter.pdf', pdf(2));
    await page.goto(workspace.url);
    // A US Letter page (612 × 792 pt) fitted to 96 and to 384 on its longer side.
    await expect.poll(() => thumbnailWidth(option(page, workspace.name, 'letter.pdf'))).toBe(74);
    await page.getByRole('button', { name: 'Grid' }).click();
    await expect.poll(() => thumbnailWidth(option(page, workspace.name, 'letter.pdf'))).toBe(297);
  });

  test('a file that is no image shows its icon and asks for no thumbnail', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'notes.txt', 'some notes');
    const asked: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/t/')) asked.push(request.url());
    });
    await page.goto(workspace.url);
    const notes = option(page, workspace.name, 'notes.txt');
    await expect(notes.locator('svg').first()).toBeVisible();
    await page.getByRole('button', { name: 'Grid' }).click();
    await expect(notes.locator('svg').first()).toBeVisible();
    await expect(notes.locator('img')).toHaveCount(0);
    expect(asked).toEqual([]);
  });

  test('a .jpg whose bytes are no image keeps its icon', async ({ page, api, workspace }) => {
    await addFile(api, workspace.id, 'broken.jpg', 'these bytes are not a JPEG');
    await addFile(api, workspace.id, 'good.jpg', await picture('jpeg'));
    const answers: number[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/small') && response.request().method() === 'GET') answers.push(response.status());
    });
    await page.goto(workspace.url);
    await expect.poll(() => thumbnailWidth(option(page, workspace.name, 'good.jpg'))).toBe(96);
    const broken = option(page, workspace.name, 'broken.jpg');
    await expect(broken.locator('img')).toHaveCount(0);
    await expect(broken.locator('svg').first()).toBeVisible();
    expect(answers).toContain(404);
  });

  test("a share's visitor sees the thumbnails of the shared folder", async ({ browser, api, workspace }) => {
    const name = `Photos ${workspace.id}`;
    const folder = await addFolder(api, workspace.id, name);
    await addFile(api, folder, 'lake.jpg', await picture('jpeg'));
    await addFile(api, folder, 'readme.txt', 'read me');
    const { code } = await shareItem(api, { folder }, { downpwd: 'Ab12cd' });

    const context = await browser.newContext({ baseURL: process.env[BASE_URL_VARIABLE] });
    const visitor = await context.newPage();
    await visitor.goto(`/s/${code}?pwd=Ab12cd`);
    await expect.poll(() => thumbnailWidth(option(visitor, name, 'lake.jpg'))).toBe(96);
    await expect(option(visitor, name, 'readme.txt').locator('img')).toHaveCount(0);
    await visitor.getByRole('button', { name: 'Grid' }).click();
    await expect.poll(() => thumbnailWidth(option(visitor, name, 'lake.jpg'))).toBe(384);
    await context.close();
  });
});
