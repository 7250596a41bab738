/**
 * Sharing by e-mail (docs/protocol.md §16): the recipients field, Send, the history of the
 * messages, and the message itself as a real SMTP server received it (the global setup starts
 * one: e2e/smtp-mailbox.ts; e2e/mailbox.ts reads it), whose link opens the share for anyone.
 */
import type { Locator, Page } from '@playwright/test';
import { addFolder, apiLogin, call, useSessionIn } from './files-api';
import { expect, expectNoSeriousViolations, folderList, keepScreenshot, test } from './fixtures';
import { shareLinkIn, waitForMessage } from './mailbox';
import { startExtraService } from './global-setup';
import { BASE_URL_VARIABLE, FILES_ACCOUNT, FILES_PASSWORD } from './service';
import { REFUSED_DOMAIN } from './smtp-mailbox';

async function openEmailShare(page: Page, listName: string, itemName: string): Promise<Locator> {
  await folderList(page, listName).getByRole('option', { name: new RegExp(itemName) }).click();
  await page.getByRole('button', { name: 'More actions' }).click();
  await page.getByRole('menuitem', { name: 'Share by e-mail…' }).click();
  const dialog = page.getByRole('dialog', { name: `Share “${itemName}” by e-mail` });
  await expect(dialog).toBeVisible();
  return dialog;
}

/** A paste of `text` into the field, as the clipboard would deliver it (line breaks included). */
async function paste(field: Locator, text: string): Promise<void> {
  await field.evaluate((input, value) => {
    const data = new DataTransfer();
    data.setData('text/plain', value);
    input.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

const recipientsField = (dialog: Locator) => dialog.getByRole('textbox', { name: 'To', exact: true });
const chips = (dialog: Locator) => dialog.getByRole('list', { name: 'Recipients' }).getByRole('listitem');

test.describe('sharing by e-mail', () => {
  test('a folder e-mailed to two recipients: an invalid address is refused as typed, the history shows the messages queued then sent, and the link in the e-mail opens the share', async ({
    page,
    api,
    workspace,
    browser,
  }, testInfo) => {
    test.setTimeout(60_000);
    const folderName = `Holiday photos ${workspace.id}`;
    await addFolder(api, workspace.id, folderName);
    await page.goto(workspace.url);
    const dialog = await openEmailShare(page, workspace.name, folderName);
    await expect(dialog).toHaveAccessibleDescription(/This folder is not shared yet\. Sending shares it/);
    await expect(dialog.getByText('No e-mails have been sent for this folder yet.')).toBeVisible();

    const to = recipientsField(dialog);
    await expect(to).toBeFocused();
    const ann = `ann.${workspace.id}@example.com`;
    const bob = `Bob.${workspace.id}@Example.org`;
    // A domain without a dot: refused as soon as the address is ended (Enter), and it stays to be corrected.
    await to.pressSequentially(`ann.${workspace.id}@example`);
    await to.press('Enter');
    await expect(to).toHaveAccessibleDescription(
      new RegExp(`^“ann\\.${workspace.id}@example” is not a valid e-mail address: its domain has no dot\\.`),
    );
    await expect(dialog.getByText(`“ann.${workspace.id}@example” is not a valid e-mail address`, { exact: false }).first()).toBeVisible();
    await expect(to).toHaveAttribute('aria-invalid', 'true');
    await expect(to).toHaveValue(`ann.${workspace.id}@example`);
    await expect(chips(dialog)).toHaveCount(0);
    // Corrected: the message goes while typing, and the address becomes a recipient.
    await to.pressSequentially('.com');
    await expect(to).not.toHaveAccessibleDescription(/is not a valid e-mail address/);
    await expect(to).not.toHaveAttribute('aria-invalid');
    await to.press('Enter');
    await to.pressSequentially(`${bob},`);
    await expect(chips(dialog)).toHaveText([ann, bob]);
    await expect(to).toHaveValue('');
    await expect(dialog.getByText('2 of 20 recipients')).toBeVisible();

    await dialog.getByRole('button', { name: 'Send' }).click();
    await expect(dialog.getByRole('status').filter({ hasText: 'Queued for 2 recipients.' })).toBeVisible();
    await expect(chips(dialog)).toHaveCount(0);
    await expect(dialog).toHaveAccessibleDescription('Each recipient gets an e-mail with the link to this folder’s share.');

    const history = dialog.getByRole('list', { name: 'E-mail history' });
    const annRow = history.getByRole('listitem').filter({ hasText: ann });
    const bobRow = history.getByRole('listitem').filter({ hasText: bob });
    // Queued first (the tests' SMTP server takes 1.5 s to accept each message), then sent.
    await expect(annRow).toContainText('Queued');
    await expect(bobRow).toContainText('Queued');
    await expectNoSeriousViolations(page, testInfo, 'email-share-queued');
    await expect(annRow).toContainText('Sent', { timeout: 30_000 });
    await expect(bobRow).toContainText('Sent', { timeout: 30_000 });
    await expect(dialog.getByText('2 sent')).toBeVisible();
    await keepScreenshot(page, testInfo, 'email-share-sent');
    await expectNoSeriousViolations(page, testInfo, 'email-share-sent');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectNoSeriousViolations(page, testInfo, 'email-share-sent-dark');
    await keepScreenshot(page, testInfo, 'email-share-sent-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // Both e-mails arrived at the SMTP server, each to its recipient, with this service's share link.
    const baseUrl = process.env[BASE_URL_VARIABLE]!;
    const toAnn = await waitForMessage(ann, { subject: folderName });
    const toBob = await waitForMessage(bob, { subject: folderName });
    expect(toAnn.subject).toBe(`${api.account} shared the folder "${folderName}" with you`);
    // The local part as typed (the mailer writes the domain in lower case).
    expect(toBob.to).toContain(`Bob.${workspace.id}@`);
    const link = shareLinkIn(toAnn);
    expect(link).toMatch(new RegExp(`^${baseUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/s/[A-Za-z0-9_-]+$`));
    expect(shareLinkIn(toBob)).toBe(link);
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(dialog).toBeHidden();

    // Someone who is not logged in opens the link: the share page shows the folder.
    const anonymous = await browser.newContext();
    try {
      const visitor = await anonymous.newPage();
      await visitor.goto(link);
      await expect(visitor.getByText(folderName).first()).toBeVisible();
      await keepScreenshot(visitor, testInfo, 'share-page-from-email');
    } finally {
      await anonymous.close();
    }
  });

  test('pasted lists become recipients: names and separators dropped, duplicates merged, at most 20, Backspace removes the last', async ({
    page,
    api,
    workspace,
  }) => {
    const folderName = `Contracts ${workspace.id}`;
    await addFolder(api, workspace.id, folderName);
    await page.goto(workspace.url);
    const dialog = await openEmailShare(page, workspace.name, folderName);
    const to = recipientsField(dialog);

    await paste(to, 'Ann Smith <ann@example.com>; bob@example.org\ncarol@localhost\r\nANN@example.com, mailto:dave@example.net');
    await expect(chips(dialog)).toHaveText(['ann@example.com', 'bob@example.org', 'dave@example.net']);
    // The refused address stays in the field, said why; the duplicate was merged into the first spelling.
    await expect(to).toHaveValue('carol@localhost');
    await expect(to).toHaveAccessibleDescription(/^“carol@localhost” is not a valid e-mail address: its domain has no dot\./);
    // Send with something refused in the field sends nothing.
    await dialog.getByRole('button', { name: 'Send' }).click();
    await expect(to).toBeFocused();
    await expect(dialog.getByText('No e-mails have been sent for this folder yet.')).toBeVisible();

    await to.fill('');
    await expect(to).not.toHaveAccessibleDescription(/is not a valid e-mail address/);
    await to.press('Backspace');
    await expect(chips(dialog)).toHaveText(['ann@example.com', 'bob@example.org']);
    await dialog.getByRole('button', { name: 'Remove ann@example.com' }).click();
    await expect(chips(dialog)).toHaveText(['bob@example.org']);
    await expect(to).toBeFocused();

    // 25 more: 19 fit, the other 6 stay in the field.
    const many = Array.from({ length: 25 }, (_, index) => `person${index}@example.com`);
    await paste(to, many.join('\n'));
    await expect(chips(dialog)).toHaveCount(20);
    await expect(dialog.getByText('20 of 20 recipients')).toBeVisible();
    await expect(to).toHaveValue(many.slice(19).join(', '));
    await expect(to).toHaveAccessibleDescription(/^At most 20 recipients at a time\. Send to these first, then to the rest\./);
  });

  test('a recipient the mail server refuses is shown as not delivered, with the server’s reason', async ({ page, api, workspace }) => {
    const folderName = `Drafts ${workspace.id}`;
    await addFolder(api, workspace.id, folderName);
    await page.goto(workspace.url);
    const dialog = await openEmailShare(page, workspace.name, folderName);
    const nobody = `nobody.${workspace.id}@${REFUSED_DOMAIN}`;
    await recipientsField(dialog).fill(nobody);
    await dialog.getByRole('button', { name: 'Send' }).click();

    const row = dialog.getByRole('list', { name: 'E-mail history' }).getByRole('listitem').filter({ hasText: nobody });
    await expect(row).toContainText('Not delivered', { timeout: 30_000 });
    await expect(row).toContainText(/Why: .*No such user here/);
    await expect(dialog.getByRole('status').filter({ hasText: '1 not delivered' })).toBeVisible();
  });

  test('a folder deleted while the dialog is open: Send says it is gone', async ({ page, api, workspace }) => {
    const folderName = `Old plans ${workspace.id}`;
    const folder = await addFolder(api, workspace.id, folderName);
    await page.goto(workspace.url);
    const dialog = await openEmailShare(page, workspace.name, folderName);
    await expect(dialog.getByText('No e-mails have been sent for this folder yet.')).toBeVisible();
    await call(api, 'FolderAndFileDelete', { dirids: folder, fids: '', is_real: 0 });

    await recipientsField(dialog).fill('ann@example.com');
    await dialog.getByRole('button', { name: 'Send' }).click();
    await expect(dialog.getByRole('alert')).toContainText('The folder does not exist, or it is not yours.');
    // What was typed is kept, to send again elsewhere.
    await expect(chips(dialog)).toHaveText(['ann@example.com']);
  });

  test('a service without a public address (no FSS_PUBLIC_URL): Send says it sends no share e-mails, and nothing is shared', async ({ browser }, testInfo) => {
    test.setTimeout(60_000);
    const other = await startExtraService({ publicUrl: false });
    const context = await browser.newContext({ baseURL: other.url });
    try {
      const api = await apiLogin(other.url, FILES_ACCOUNT, FILES_PASSWORD);
      await addFolder(api, 0, 'Reports');
      const page = await context.newPage();
      await useSessionIn(page, api);
      await page.goto('/');
      const dialog = await openEmailShare(page, 'All files', 'Reports');
      await recipientsField(dialog).fill('ann@example.com');
      await dialog.getByRole('button', { name: 'Send' }).click();
      await expect(dialog.getByRole('alert')).toHaveText(
        'This service cannot send share e-mails: its administrator has not set its public address (FSS_PUBLIC_URL). Nothing was sent or shared. Copy the share link instead (Share…).',
      );
      await expectNoSeriousViolations(page, testInfo, 'email-share-unavailable');
      await keepScreenshot(page, testInfo, 'email-share-unavailable');
      // What was typed is kept; the folder was not shared.
      await expect(chips(dialog)).toHaveText(['ann@example.com']);
      const { folders } = await call(api, 'GetFiles', { dir: 0, order: 'name', desc: 0 });
      expect(folders.find((item) => item.name === 'Reports')).toMatchObject({ shared: false });
    } finally {
      await context.close();
      await other.stop();
    }
  });
});
