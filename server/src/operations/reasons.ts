/**
 * Why a call was refused: the `reason` attribute beside `code` and `msg` (docs/protocol.md §4.2), stable and
 * kebab-case, so that clients translate refusals without reading the English `msg`. The one list: the error
 * factories take only these, the typed client and the app's translations are derived from it.
 */
export const REASONS = {
  400: [
    'nul-character', 'parameter-invalid', 'name-invalid', 'ext-mismatch', 'ids-empty', 'too-many-ids', 'keyword-empty',
    'keyword-too-long', 'account-name-invalid', 'password-length', 'quota-invalid', 'label-too-long', 'downpwd-invalid',
    'description-too-long', 'image-empty', 'image-unreadable', 'tip-too-long', 'tip-contains-password', 'root-not-encryptable',
    'email-invalid', 'recipients-empty', 'too-many-recipients',
  ],
  401: ['token-expired'],
  403: ['sign-wrong', 'password-wrong', 'downpwd-required', 'downpwd-wrong', 'download-limit'],
  404: [
    'folder-not-found', 'file-not-found', 'item-not-found', 'account-not-found', 'api-key-not-found', 'upload-not-found',
    'content-not-found', 'share-not-found',
  ],
  409: [
    'name-taken', 'names-collide', 'numbered-name-too-long', 'into-itself', 'not-in-bin', 'inside-deleted-folder',
    'not-encrypted', 'inside-encrypted-folder', 'changed-meanwhile', 'not-shared',
  ],
  413: ['quota-exceeded', 'too-deep', 'too-many-items', 'upload-too-large', 'image-too-large', 'too-many-covers', 'too-many-keys'],
  423: ['encrypted-locked', 'encrypted-excluded', 'encrypted-in-share', 'already-encrypted'],
  429: ['password-attempts', 'server-busy', 'share-attempts', 'email-hourly-limit', 'email-daily-limit'],
  501: ['not-implemented'],
  503: ['public-url-unset', 'service-unavailable'],
} as const;

type ReasonsByCode = typeof REASONS;
/** The reasons a refusal with this code may carry. */
export type ReasonOf<C extends keyof ReasonsByCode> = ReasonsByCode[C][number];
export type Reason = ReasonOf<keyof ReasonsByCode>;

/** Every reason, in the order of the table above. */
export const ALL_REASONS: readonly Reason[] = Object.values(REASONS).flat();
