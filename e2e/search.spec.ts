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
    const field = page.getByRole('searchbox', { name: 'Search folder and file names' });
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
    await expect(page.getByText(`No folder or file names contain “nothing like ${tag}”.`)).toBeVisible();

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

  test('folders are found before files, each with its path, and opening a folder goes into it', async ({ page, api, workspace }) => {
    const projects = await addFolder(api, workspace.id, 'Projects');
    const tag = `f${workspace.id}x`;
    const reports = await addFolder(api, projects, `Reports ${tag}`);
    await addFile(api, workspace.id, `reports ${tag}.txt`, 'a file of the same name');

    await page.goto(`/search?q=${encodeURIComponent(`REPORTS ${tag}`)}`);
    const results = page.getByRole('listbox', { name: `Results for “REPORTS ${tag}”` });
    await expect(results.getByRole('option')).toHaveCount(2);
    await expect(results.getByRole('option').first()).toContainText(`Reports ${tag}`);
    await expect(results.getByRole('option').first()).toContainText(`/${workspace.name}/Projects`);
    await expect(results.getByRole('option').nth(1)).toContainText(`reports ${tag}.txt`);

    await results.getByRole('option').first().dblclick();
    await expect(page).toHaveURL(new RegExp(`/folder/${reports}$`));
    await expect(page.getByRole('heading', { level: 1, name: `Reports ${tag}` })).toBeVisible();
  });

  test('the search box in the header searches from any page, with Enter; "/" focuses it', async ({ page, api, workspace }) => {
    const tag = `h${workspace.id}x`;
    await addFile(api, workspace.id, `budget ${tag}.xlsx`, 'numbers');

    await page.goto(workspace.url);
    const headerField = page.getByRole('banner').getByRole('searchbox', { name: 'Search everywhere' });
    await page.getByRole('heading', { level: 1 }).click();
    await page.keyboard.press('/');
    await expect(headerField).toBeFocused();
    await headerField.fill(`budget ${tag}`);
    await headerField.press('Enter');

    await expect(page).toHaveURL(new RegExp(`/search\\?q=budget\\+${tag}$`));
    await expect(page.getByRole('searchbox', { name: 'Search folder and file names' })).toHaveValue(`budget ${tag}`);
    const results = page.getByRole('listbox', { name: `Results for “budget ${tag}”` });
    await expect(results.getByRole('option')).toHaveCount(1);
    await expect(results.getByRole('option', { name: new RegExp(`budget ${tag}`) })).toBeVisible();
  });
});
