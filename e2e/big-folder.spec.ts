import { call, useSessionIn } from './files-api';
import { expect, keepScreenshot, test } from './fixtures';
import { BIG_FOLDER_NAME, BIG_FOLDER_SIZE, BIG_FOLDER_VARIABLE, bigItemName } from './service';

test.describe('a folder of 10,000 items', () => {
  // The global setup fills the folder while the other tests run; this waits for the rest.
  test.setTimeout(120_000);

  test('is listed, scrolls to its last item, and keeps only the rows on screen in the page', async ({ page, api }, testInfo) => {
    const folder = Number(process.env[BIG_FOLDER_VARIABLE]);
    expect(folder, 'the global setup made the big folder').toBeGreaterThan(0);
    await expect
      .poll(
        async () => (await call(api, 'GetFiles', { dir: String(folder), order: 'name', desc: '0' })).count,
        { timeout: 100_000, intervals: [2_000] },
      )
      .toBe(BIG_FOLDER_SIZE);

    await useSessionIn(page, api);
    const started = Date.now();
    await page.goto(`/folder/${folder}`);
    const list = page.getByRole('listbox', { name: `Contents of ${BIG_FOLDER_NAME}` });
    await expect(page.getByText('10,000 folders, 0 files')).toBeVisible();
    await expect(list.getByRole('option', { name: new RegExp(bigItemName(0)) })).toBeVisible();
    testInfo.annotations.push({ type: 'listed in', description: `${Date.now() - started} ms` });

    // Virtualized: a screenful of rows, not 10,000.
    expect(await list.getByRole('option').count()).toBeLessThan(80);

    // Scrolled to the end, the last item is there.
    await list.evaluate((element) => element.scrollTo({ top: element.scrollHeight }));
    const last = list.getByRole('option', { name: new RegExp(bigItemName(BIG_FOLDER_SIZE - 1)) });
    await expect(last).toBeVisible();
    await expect(last).toHaveAttribute('aria-posinset', String(BIG_FOLDER_SIZE));
    expect(await list.getByRole('option').count()).toBeLessThan(80);
    // A click there selects it, and the list stays where it is.
    await last.click();
    await expect(last).toHaveAttribute('aria-selected', 'true');
    await expect(last).toBeInViewport();
    await keepScreenshot(page, testInfo, 'big-folder-end');

    // The keyboard gets there too: Home, then End, selects the first and the last.
    await page.keyboard.press('Home');
    await expect(list.getByRole('option', { name: new RegExp(bigItemName(0)) })).toHaveAttribute('aria-selected', 'true');
    await page.keyboard.press('End');
    await expect(last).toHaveAttribute('aria-selected', 'true');
    await page.keyboard.press('ControlOrMeta+a');
    await expect(page.getByText('10,000 selected')).toBeVisible();
  });
});
