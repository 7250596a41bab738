/** The storage meter in the header, and an upload that cannot fit refused before a byte is sent (issue 22). */
import { test, expect } from '@playwright/test';
import { apiLogin, useSessionIn } from './files-api';
import { BASE_URL_VARIABLE, QUOTA_ACCOUNT, QUOTA_BYTES, QUOTA_PASSWORD } from './service';

test('the header shows the storage used, and a file bigger than what is left is refused with both sizes', async ({ page }) => {
  const session = await apiLogin(process.env[BASE_URL_VARIABLE]!, QUOTA_ACCOUNT, QUOTA_PASSWORD);
  await useSessionIn(page, session);
  await page.goto('/');
  const meter = page.getByRole('meter', { name: 'Storage used' });
  await expect(meter).toHaveAttribute('aria-valuemax', String(QUOTA_BYTES));
  await expect(page.getByTestId('quota-meter')).toContainText('of 97.7 KB used');

  const uploads: string[] = [];
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith('/upload') || request.postData()?.includes('FileAdd')) uploads.push(pathname);
  });
  await page.getByTestId('upload-files-input').setInputFiles({ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(QUOTA_BYTES + 1) });
  const notice = page.getByRole('alert').filter({ hasText: 'Not enough space' });
  await expect(notice).toContainText('These files need 97.7 KB');
  await expect(notice).toContainText('97.7 KB is left');
  expect(uploads).toEqual([]);
});
