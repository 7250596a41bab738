/** What the global setup creates, for the tests. */
export const E2E_ACCOUNT = 'e2e';
export const E2E_PASSWORD = 'e2e-secret-1';
/**
 * The file manager's tests work in an account of their own, so that the login tests still find
 * an empty root. Each test works in a folder of its own inside it (e2e/fixtures.ts).
 */
export const FILES_ACCOUNT = 'files';
export const FILES_PASSWORD = 'files-secret-1';
/** An account with a small quota (QUOTA_BYTES), for the quota meter and the uploads refused before they start. */
export const QUOTA_ACCOUNT = 'quota';
export const QUOTA_PASSWORD = 'quota-secret-1';
export const QUOTA_BYTES = 100_000;
/** The environment variable that carries the running service's base URL to the tests. */
export const BASE_URL_VARIABLE = 'FSS_E2E_BASE_URL';
/**
 * The folder where the tests' SMTP server (e2e/smtp-mailbox.ts, started by the global setup)
 * writes each message it receives as a .eml file; e2e/mailbox.ts reads it.
 */
export const MAILBOX_VARIABLE = 'FSS_E2E_MAILBOX';
/** The folder of 10,000 items that the global setup fills while the other tests run (its id). */
export const BIG_FOLDER_VARIABLE = 'FSS_E2E_BIG_FOLDER';
export const BIG_FOLDER_NAME = 'Ten thousand';
export const BIG_FOLDER_SIZE = 10_000;
/** The name of the n-th item of the big folder: zero-padded, so that name order is index order. */
export const bigItemName = (index: number) => `item ${String(index).padStart(5, '0')}`;
