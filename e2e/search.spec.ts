import { addFile, addFolder } from './files-api';
import { expect, keepScreenshot, test } from './fixtures';

test.describe('search', () => {
  test('typing searches file names everywhere; results show their folder and open in it', async ({ page, api, workspace }, testInfo) => {
    const projects = await addFolder(api, workspace.id, 'Projects');
    const alpha = await addFolder(api, projects, 'Alpha');
    const tag = `q${workspace.id}x`;
    await addFile(api, alpha, `Quarterly report ${tag}.txt`, 'the quarterly report');
    await addFile(api, workspace.id, `notes ${tag}.md`, '# notes');
    await addFile(api, workspace.id, 'unrelated.txt', 'nothing');

    await page.goto(workspace.url);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Search' }).click();
    const field = page.getByRole('searchbox', { name: 'Search file names' });
    await expect(field).toBeFocused();
    await field.pressSequentially(`REPORT ${tag}`, { delay: 20 });
    // Debounced: the address gets the keyword once typing pauses.
    await expect(page).toHaveURL(new RegExp(`/search\\?q=REPORT\\+${tag}$`));

    const results = page.getByRole('listbox', { name: `Results for “REPORT ${tag}”` });
    await expect(results.getByRole('option')).toHaveCount(1);
    const hit = results.getByRole('option', { name: new RegExp(`Quarterly report ${tag}`) });
    await expect(hit).toContainText(`/${workspace.name}/Projects/Alpha`);
    await keepScreenshot(page, testInfo, 'search-results');

    await field.fill(tag);
    await expect(results).toBeHidden();
    const broader = page.getByRole('listbox', { name: `Results for “${tag}”` });
    await expect(broader.getByRole('option')).toHaveCount(2);
    await expect(broader.getByRole('option', { name: new RegExp(`notes ${tag}`) })).toContainText(`/${workspace.name}`);

    await field.fill(`nothing like ${tag}`);
    await expect(page.getByText(`No file names contain “nothing like ${tag}”.`)).toBeVisible();

    // Back to the first search (the address), and open the result's folder with a double-click.
    await field.fill(`report ${tag}`);
    const again = page.getByRole('listbox', { name: `Results for “report ${tag}”` });
    await again.getByRole('option').dblclick();
    await expect(page).toHaveURL(new RegExp(`/folder/${alpha}$`));
    await expect(page.getByRole('heading', { level: 1, name: 'Alpha' })).toBeVisible();
    await expect(page.getByRole('option', { name: new RegExp(`Quarterly report ${tag}`) })).toHaveAttribute('aria-selected', 'true');

    // Back returns to the search, with its keyword.
    await page.goBack();
    await expect(field).toHaveValue(`report ${tag}`);
    await expect(again.getByRole('option')).toHaveCount(1);
  });
});
