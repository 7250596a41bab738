/** What the global setup creates, for the tests. */
export const E2E_ACCOUNT = 'e2e';
export const E2E_PASSWORD = 'e2e-secret-1';
/** The environment variable that carries the running service's base URL to the tests. */
export const BASE_URL_VARIABLE = 'FSS_E2E_BASE_URL';
