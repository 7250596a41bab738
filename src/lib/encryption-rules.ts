/**
 * The service's rules for encryption passwords and hints (server/src/operations/encryption/encryption.ts,
 * docs/encryption.md §1), checked in the browser first so that the dialog can say what is wrong
 * next to the field. Lengths are in characters (code points) after NFC, as the service counts.
 */

export const PASSWORD_MIN_LENGTH = 4;
export const PASSWORD_MAX_LENGTH = 64;
export const TIP_MAX_LENGTH = 100;

const lengthOf = (text: string) => [...text.normalize('NFC')].length;

export type PasswordProblem = 'length';
export type TipProblem = 'length' | 'containsPassword';

/** Whether the service takes `password` (FileEncrypt, FolderEncrypt, Unlock, Decrypt): null if so. */
export function passwordProblem(password: string): PasswordProblem | null {
  const length = lengthOf(password);
  return length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH ? 'length' : null;
}

/**
 * Whether the service takes `tip` with `password`: at most 100 characters, and it must not
 * contain the password, compared without regard to case (a hint that spells the password in
 * capitals gives it away as well).
 */
export function tipProblem(tip: string, password: string): TipProblem | null {
  const value = tip.normalize('NFC');
  if (lengthOf(value) > TIP_MAX_LENGTH) return 'length';
  const secret = password.normalize('NFC');
  if (secret.length > 0 && value.toLowerCase().includes(secret.toLowerCase())) return 'containsPassword';
  return null;
}
