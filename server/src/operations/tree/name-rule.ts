/**
 * The rule a client's name must follow (docs/protocol.md §10.1). No imports: the web app carries a copy word for word
 * (src/api/generated/name-rule.ts; a test fails on drift). Format characters are refused only where they deceive.
 */

/** Why a name is refused; null from nameProblem when it is not. */
export type NameProblem =
  | { readonly kind: 'empty' }
  | { readonly kind: 'too-long'; readonly maxLength: number }
  | { readonly kind: 'not-unicode' }
  | { readonly kind: 'forbidden-character'; readonly character: string }
  | { readonly kind: 'control-character' }
  | { readonly kind: 'deceptive-character'; readonly codePoint: number; readonly what: DeceptiveCharacter }
  | { readonly kind: 'dot-name' }
  | { readonly kind: 'spaces-at-ends' }
  | { readonly kind: 'invisible' };

export type DeceptiveCharacter = 'bidi-control' | 'separator' | 'noncharacter';

const FORBIDDEN_CHARACTERS = '/\\:*?"<>|';

/** Unicode's Bidi_Control characters, listed rather than `\p{Bidi_Control}` so every engine's Unicode version agrees. */
export const BIDI_CONTROLS: readonly number[] = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];

/** U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR: a line break in the middle of a name. */
export const SEPARATORS: readonly number[] = [0x2028, 0x2029];

/** The 66 noncharacters: U+FDD0–U+FDEF, and the last two code points of each plane (U+nFFFE, U+nFFFF). */
export function isNoncharacter(codePoint: number): boolean {
  return (codePoint >= 0xfdd0 && codePoint <= 0xfdef) || (codePoint & 0xfffe) === 0xfffe;
}

/** What shows as nothing: white space, Default_Ignorable_Code_Point characters and blank braille U+2800. */
const INVISIBLE =
  /^[\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]+$/u;

function deceptive(codePoint: number): DeceptiveCharacter | null {
  if (BIDI_CONTROLS.includes(codePoint)) return 'bidi-control';
  if (SEPARATORS.includes(codePoint)) return 'separator';
  if (isNoncharacter(codePoint)) return 'noncharacter';
  return null;
}

const isControl = (codePoint: number) => codePoint <= 0x1f || (codePoint >= 0x7f && codePoint <= 0x9f);
const isSurrogate = (codePoint: number) => codePoint >= 0xd800 && codePoint <= 0xdfff;

/** The first problem of `name` (already in NFC), or null when the service accepts it. */
export function nameProblem(name: string, maxLength: number): NameProblem | null {
  if (name === '') return { kind: 'empty' };
  const codePoints = Array.from(name, (character) => character.codePointAt(0)!);
  if (codePoints.length > maxLength) return { kind: 'too-long', maxLength };
  // A pair of surrogates is one code point here; what is left of 0xD800–0xDFFF is a lone one.
  if (codePoints.some(isSurrogate)) return { kind: 'not-unicode' };
  for (const codePoint of codePoints) {
    const character = String.fromCodePoint(codePoint);
    if (FORBIDDEN_CHARACTERS.includes(character)) return { kind: 'forbidden-character', character };
    if (isControl(codePoint)) return { kind: 'control-character' };
  }
  for (const codePoint of codePoints) {
    const what = deceptive(codePoint);
    if (what) return { kind: 'deceptive-character', codePoint, what };
  }
  if (name === '.' || name === '..') return { kind: 'dot-name' };
  if (name.trim() !== name) return { kind: 'spaces-at-ends' };
  if (INVISIBLE.test(name)) return { kind: 'invisible' };
  return null;
}

/** `U+202E`: how a message names a code point. */
export function codePointLabel(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

const DECEPTIVE_WHAT: Readonly<Record<DeceptiveCharacter, string>> = {
  'bidi-control': 'a bidirectional text control',
  separator: 'a line or paragraph separator',
  noncharacter: 'a noncharacter',
};

/** The service's message for a problem (English); `what` names the parameter: "name", "newname". */
export function nameProblemMessage(problem: NameProblem, what = 'name'): string {
  switch (problem.kind) {
    case 'empty':
      return `${what} is empty`;
    case 'too-long':
      return `${what} is longer than ${problem.maxLength} characters`;
    case 'not-unicode':
      return `${what} is not valid Unicode`;
    case 'forbidden-character':
      return `${what} may not contain "${problem.character}"`;
    case 'control-character':
      return `${what} may not contain control characters`;
    case 'deceptive-character':
      return `${what} may not contain ${codePointLabel(problem.codePoint)} (${DECEPTIVE_WHAT[problem.what]})`;
    case 'dot-name':
      return `${what} may not be "." or ".."`;
    case 'spaces-at-ends':
      return `${what} may not begin or end with spaces`;
    case 'invisible':
      return `${what} has no visible character`;
  }
}

/** The extension FileAdd expects, lowercase: after the last dot unless first or last ("a.tar.GZ" → "gz", ".profile" → ""). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? name.slice(dot + 1).toLowerCase() : '';
}
