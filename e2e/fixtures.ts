/**
 * The file manager's test fixtures: a session of the files account (from Node, for setting things
 * up), the browser logged in with it, and a folder of the test's own to work in, so that tests
 * never see each other's items. Also: screenshots kept as test output, and the axe scan.
 */
import AxeBuilder from '@axe-core/playwright';
import { test as base, expect, type Page, type TestInfo } from '@playwright/test';
import { addFolder, apiLogin, useSessionIn, type ApiSession } from './files-api';
import { BASE_URL_VARIABLE, FILES_ACCOUNT, FILES_PASSWORD } from './service';

export interface Workspace {
  readonly id: number;
  readonly name: string;
  /** The folder page's address. */
  readonly url: string;
}

let counter = 0;

export const test = base.extend<{ api: ApiSession; workspace: Workspace }>({
  api: async ({}, use) => {
    const baseUrl = process.env[BASE_URL_VARIABLE];
    if (!baseUrl) throw new Error(`${BASE_URL_VARIABLE} is not set: the global setup did not run`);
    await use(await apiLogin(baseUrl, FILES_ACCOUNT, FILES_PASSWORD));
  },
  workspace: async ({ api, page }, use, testInfo) => {
    // A name the service takes: no / \ : * ? " < > |, unique per test.
    const title = testInfo.title.replace(/[\\/:*?"<>|]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 40).trim();
    const name = `${title} ${process.pid}-${++counter}`;
    const id = await addFolder(api, 0, name);
    await useSessionIn(page, api);
    await use({ id, name, url: `/folder/${id}` });
  },
});

export { expect };

/** A screenshot of the page, kept in the test's output folder and attached to the report. */
export async function keepScreenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const path = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path });
  await testInfo.attach(name, { path, contentType: 'image/png' });
}

/** Runs axe-core on the page and fails on serious or critical violations, listing them. */
export async function expectNoSeriousViolations(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  // Colours mid-transition (e.g. just after a switch to the dark scheme) are not what a user reads.
  await page.evaluate(() => Promise.all(document.getAnimations().map((animation) => animation.finished.catch(() => undefined))));
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  await testInfo.attach(`axe-${name}.json`, { body: JSON.stringify(results.violations, null, 2), contentType: 'application/json' });
  const report = serious.map(
    (violation) =>
      `${violation.id} (${violation.impact}): ${violation.help}\n${violation.nodes
        .slice(0, 5)
        .map((node) => `    ${node.target.join(' ')}: ${node.failureSummary?.split('\n').join(' ')}`)
        .join('\n')}`,
  );
  expect(report, `axe violations on ${name}`).toEqual([]);
}

/** The list of a folder page. */
export const folderList = (page: Page, folderName: string) => page.getByRole('listbox', { name: `Contents of ${folderName}` });

/**
 * Narrows the shares or links view to names containing `text` (its "Filter by name" box): the
 * tests share one account, and a virtualized view shows only the rows on screen.
 */
export async function filterView(page: Page, text: string): Promise<void> {
  await page.getByRole('searchbox', { name: 'Filter by name' }).fill(text);
}
