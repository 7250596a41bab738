/** Names of files and folders: checked (name-rule.ts), compared (NFC, case-insensitive), sorted naturally, made unique. */
import type { ItemName } from '../../storage/db/repositories/items-repository';
import { invalidArgument } from '../errors';
import { extensionOf, nameProblem, nameProblemMessage } from './name-rule';

export { extensionOf };

/** Length in characters (code points), as users count them. */
export function nameLength(name: string): number {
  let length = 0;
  for (const _ of name) length++;
  return length;
}

/** A client's name in NFC, or 400 saying what is wrong; `what` names the parameter ("name", "newname"). */
export function validName(raw: string | null, maxLength: number, what = 'name'): string {
  const name = (raw ?? '').normalize('NFC');
  const problem = nameProblem(name, maxLength);
  if (problem) throw invalidArgument('name-invalid', nameProblemMessage(problem, what));
  return name;
}

/** What uniqueness compares: NFC, then lower case (locale-independent, every script). */
export function nameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

const DIGIT_RUN = /[0-9]+/g;
const NUMBER_WIDTH = 20;

/**
 * A key whose code point order is the natural, case-insensitive order ("file2" < "file10"), so listings
 * stream sorted from an index. Numbers longer than 20 digits keep their text.
 */
export function naturalSortKey(name: string): string {
  return nameKey(name).replace(DIGIT_RUN, (digits) => {
    const value = digits.replace(/^0+(?=\d)/, '');
    return value.length <= NUMBER_WIDTH ? value.padStart(NUMBER_WIDTH, '0') : value;
  });
}
/**
 * Splits "report.pdf" into "report" and ".pdf". A file name ending in dots keeps them last ("notes" and
 * "."): a suffix after them ("notes. (1)") would give it the extension " (1)".
 */
function splitExtension(name: string, isFile: boolean): [string, string] {
  const ext = isFile ? extensionOf(name) : '';
  if (ext) return [name.slice(0, name.length - ext.length - 1), name.slice(name.length - ext.length - 1)];
  const trailingDots = isFile ? /^(.*[^.])(\.+)$/s.exec(name) : null;
  return trailingDots ? [trailingDots[1], trailingDots[2]] : [name, ''];
}

/** "report.pdf" with " (1)" → "report (1).pdf"; a folder "Photos" → "Photos (1)". */
export function withSuffix(name: string, suffix: string, isFile: boolean): string {
  const [stem, ext] = splitExtension(name, isFile);
  return `${stem}${suffix}${ext}`;
}

/** The first of `name`, `name (1)`, … whose key is not in `taken` (the folder's colliding keys, read in one query). */
export function firstFreeName(name: string, isFile: boolean, taken: ReadonlySet<string>): string {
  if (!taken.has(nameKey(name))) return name;
  for (let n = 1; ; n++) {
    const candidate = withSuffix(name, ` (${n})`, isFile);
    if (!taken.has(nameKey(candidate))) return candidate;
  }
}

/** Stands in for the number while the key of "name (N)" is built; no valid name contains it. */
const NUMBER_MARK = '\u0000';

/**
 * `prefix + digits + suffix` matches the keys of every numbered form of `name` (one LIKE query). Built from
 * a whole candidate, not the stem: lower-casing depends on context (a Greek final sigma before " (").
 */
export function numberedNameKeys(name: string, isFile: boolean): { readonly prefix: string; readonly suffix: string } {
  const [prefix, suffix] = nameKey(withSuffix(name, ` (${NUMBER_MARK})`, isFile)).split(NUMBER_MARK);
  return { prefix, suffix };
}

/** A valid name with the keys stored beside it: every insert and rename writes all three. */
export function storedName(name: string): ItemName {
  return { name, key: nameKey(name), sortKey: naturalSortKey(name) };
}
