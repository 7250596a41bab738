/** The service's password and hint rules (docs/encryption.md §1), in code points after NFC as the service counts. */

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

/** At most 100 characters, not containing the password in any case (capitals would give it away as well). */
export function tipProblem(tip: string, password: string): TipProblem | null {
  const value = tip.normalize('NFC');
  if (lengthOf(value) > TIP_MAX_LENGTH) return 'length';
  const secret = password.normalize('NFC');
  if (secret.length > 0 && value.toLowerCase().includes(secret.toLowerCase())) return 'containsPassword';
  return null;
}
