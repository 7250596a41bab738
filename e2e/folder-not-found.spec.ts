/** A folder page whose folder does not exist (404): nothing can be added there, and the breadcrumb leads back to All files. */
import { expect, test } from './fixtures';

test('a missing folder disables New folder and Upload, and its breadcrumb leads back to All files', async ({ page, workspace }) => {
  await page.goto(workspace.url);
  await expect(page.getByRole('button', { name: 'New folder' })).toBeEnabled();
  await page.goto('/folder/999999999');
  const main = page.getByRole('main');
  await expect(main.getByRole('alert')).toBeVisible();
  for (const name of ['New folder', 'Upload', 'Upload folder']) await expect(main.getByRole('button', { name, exact: true })).toBeDisabled();
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'All files' }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(main.getByRole('button', { name: 'New folder' })).toBeEnabled();
});
