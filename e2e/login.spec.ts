import { expect, test } from '@playwright/test';
import { E2E_ACCOUNT, E2E_PASSWORD } from './service';

test.describe('logging in and out', () => {
  test('the login page logs in, shows the account in the header, and Log out returns to the login page', async ({ page }) => {
    await page.goto('/');
    // Not logged in: the app sends the visitor to the login page.
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByRole('heading', { name: 'Log in to Files' })).toBeVisible();

    await page.getByLabel('Account name or ID').fill(E2E_ACCOUNT);
    await page.getByLabel('Password').fill(E2E_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();

    const header = page.getByRole('banner');
    await expect(header.getByTestId('account-name')).toHaveText(E2E_ACCOUNT);
    await expect(page).toHaveURL(/\/$/);
    // The new account's root folder is listed, and empty.
    await expect(page.getByRole('heading', { name: 'All files' })).toBeVisible();
    await expect(page.getByText('This folder is empty.')).toBeVisible();

    await header.getByRole('button', { name: 'Log out' }).click();
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByRole('heading', { name: 'Log in to Files' })).toBeVisible();
    await expect(page.getByRole('status')).toHaveText('You have logged out.');

    // The session is gone: the app does not let the user back in without logging in.
    await page.goto('/');
    await expect(page).toHaveURL(/\/login$/);
  });

  test('a wrong password shows the error message and keeps the user on the login page', async ({ page }) => {
    await page.goto('/login');
    await page.getByLabel('Account name or ID').fill(E2E_ACCOUNT);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Log in' }).click();

    await expect(page.getByRole('alert')).toHaveText('Wrong account name or password.');
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByLabel('Password')).toBeFocused();
    await expect(page.getByLabel('Password')).toHaveValue('');
  });

  test('a throttled login says how long to wait before trying again', async ({ page }) => {
    // Five wrong passwords for an account nobody has (so that no other test's account is blocked):
    // the (account, address) pair is then blocked for a minute (docs/protocol.md §5.5).
    await page.goto('/login');
    const account = `nobody-${Date.now()}`;
    for (let attempt = 1; attempt <= 6; attempt++) {
      await page.getByLabel('Account name or ID').fill(account);
      await page.getByLabel('Password').fill(`guess-${attempt}`);
      await page.getByRole('button', { name: 'Log in' }).click();
      // A refused login empties the password field: the answer of this attempt is in.
      await expect(page.getByLabel('Password')).toHaveValue('');
      const expected = attempt <= 5 ? 'Wrong account name or password.' : /^Too many login attempts\. Wait (1 minute|\d+ seconds), then try again\.$/;
      await expect(page.getByRole('alert')).toHaveText(expected);
    }
    await expect(page).toHaveURL(/\/login$/);
  });

  test('a token the service refuses sends the user to the login page, and back after logging in', async ({ page }) => {
    await page.goto('/login');
    await page.getByLabel('Account name or ID').fill(E2E_ACCOUNT);
    await page.getByLabel('Password').fill(E2E_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByRole('banner').getByTestId('account-name')).toHaveText(E2E_ACCOUNT);

    // Stand in for an expired token: the service answers 401 to the next call.
    await page.evaluate(() => {
      const stored = JSON.parse(sessionStorage.getItem('fss.session') ?? '{}') as { token?: string };
      sessionStorage.setItem('fss.session', JSON.stringify({ ...stored, token: 'expired-token' }));
    });
    await page.goto('/folder/5?order=size&desc=1');
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.getByRole('status')).toHaveText('Your session has ended. Log in again to continue.');

    await page.getByLabel('Account name or ID').fill(E2E_ACCOUNT);
    await page.getByLabel('Password').fill(E2E_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page).toHaveURL(/\/folder\/5\?order=size&desc=1$/);
    await expect(page.getByRole('banner').getByTestId('account-name')).toHaveText(E2E_ACCOUNT);
  });

  test('at 360 px the login form fits the screen and logs in', async ({ page }) => {
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto('/login');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);

    await page.getByLabel('Account name or ID').fill(E2E_ACCOUNT);
    await page.getByLabel('Password').fill(E2E_PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await expect(page.getByRole('banner').getByTestId('account-name')).toHaveText(E2E_ACCOUNT);
    await expect(page.getByRole('banner').getByRole('button', { name: 'Log out' })).toBeVisible();
  });
});
