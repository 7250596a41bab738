import { expect, test } from '@playwright/test';
import { operationsOf } from '../server/src/catalog/operations';

test.describe('the service help pages', () => {
  test('/FileService.asmx lists every FileService operation of the catalog', async ({ page }) => {
    const response = await page.goto('/FileService.asmx');
    expect(response?.status()).toBe(200);
    for (const op of operationsOf('FileService')) {
      await expect(page.getByRole('link', { name: op.name, exact: true }).first()).toBeVisible();
    }
  });

  test('the FolderRename page has a test form whose submission the service answers with a <result> document', async ({
    page,
    context,
  }) => {
    await page.goto('/FileService.asmx?op=FolderRename');
    const form = page.locator('form').filter({ has: page.locator('input[name="newname"]') });
    await expect(form).toHaveCount(1);

    // The form cannot sign: a 401 (unknown token) or 403 (bad sign) is the expected answer.
    const values: Record<string, string> = { uid: '1', token: 'not-a-token', dirid: '1', newname: 'renamed', sign: '0' };
    for (const [name, value] of Object.entries(values)) await form.locator(`[name="${name}"]`).fill(value);

    // ASMX test forms open the answer in a new window (target="_blank"); watch the whole context.
    const answer = context.waitForEvent('response', {
      predicate: (response) => new URL(response.url()).pathname === '/FileService.asmx/FolderRename',
    });
    await form.locator('[type="submit"]').first().click();
    const response = await answer;

    expect(response.status()).toBe(200);
    expect(response.headers()['content-type']).toMatch(/^text\/xml/);
    const body = await response.text();
    expect(body).toMatch(/<result\b/);
    expect(body).toMatch(/code="(401|403)"/);
  });
});
