import { addFolder } from './files-api';
import { expect, test } from './fixtures';

test.describe('refusals in the user’s language', () => {
  test('in zh-CN a name the service refuses as taken is told in Chinese, never in the service’s English', async ({ page, api, workspace }) => {
    await addFolder(api, workspace.id, 'Invoices');
    await page.goto(workspace.url);
    await page.getByLabel('Language').selectOption('zh-CN');
    await page.getByRole('button', { name: '新建文件夹' }).click();
    const create = page.getByRole('dialog', { name: '新建文件夹' });
    await create.getByLabel('文件夹名称').fill('INVOICES');
    await create.getByRole('button', { name: '创建' }).click();
    await expect(create.getByRole('alert')).toContainText('此处已有同名的项目。');
    await expect(create.getByRole('alert')).not.toContainText('already exists');
    await page.keyboard.press('Escape');
    await page.getByLabel('语言').selectOption('en');
  });
});
