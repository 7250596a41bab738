// A rough, honest guessing estimate (in bits) for the encrypt dialog's meter: short, one class, runs, common passwords.
// Not zxcvbn; the service only insists on 4–64 characters (docs/encryption.md §1), this meter advises.

export type StrengthLevel = 'weak' | 'fair' | 'good' | 'strong';

/** What would make the password stronger, most useful first. */
export type StrengthHint = 'common' | 'pattern' | 'length' | 'variety';

export interface PasswordStrength {
  readonly level: StrengthLevel;
  /** Estimated guessing work in bits (rounded down). */
  readonly bits: number;
  readonly hints: readonly StrengthHint[];
}

/** Upper bounds (exclusive) in bits for weak, fair and good; above is strong. */
const LEVEL_BOUNDS: readonly (readonly [number, StrengthLevel])[] = [
  [35, 'weak'],
  [50, 'fair'],
  [70, 'good'],
];

/** Lengths below this always get the length hint. */
const GOOD_LENGTH = 12;

/** Common passwords (lower case, leetspeak undone): one found anywhere counts as one guess among thousands, not as its letters. */
const COMMON_WORDS: readonly string[] = [
  'password', 'passwort', 'letmein', 'welcome', 'iloveyou', 'admin', 'administrator', 'login', 'qwerty',
  'monkey', 'dragon', 'football', 'baseball', 'soccer', 'hockey', 'master', 'shadow', 'sunshine',
  'princess', 'superman', 'batman', 'trustno', 'starwars', 'whatever', 'freedom', 'secret', 'hello',
  'charlie', 'michael', 'jordan', 'hunter', 'killer', 'pokemon', 'ninja', 'mustang', 'access', 'flower',
  'computer', 'internet', 'google', 'summer', 'winter', 'spring', 'autumn', 'love', 'lovely', 'angel',
  'cookie', 'cheese', 'banana', 'orange', 'purple', 'matrix', 'changeme', 'default', 'guest', 'test',
  'user', 'root', 'abc', 'asdf', 'zxcv', 'qazwsx', 'wodemima', 'woaini', 'mima',
];

/** Keyboard rows: walking along one ("qwerty", "asdf", "7890") is a pattern, not randomness. */
const KEYBOARD_ROWS: readonly string[] = ['`1234567890-=', 'qwertyuiop[]\\', "asdfghjkl;'", 'zxcvbnm,./'];

/** Leet swaps undone before looking for common words. */
const UNLEET: Readonly<Record<string, string>> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's', '!': 'i' };

/** Bits a common word is worth: one of a few thousand likely guesses. */
const COMMON_WORD_BITS = 11;
/** A character that repeats or continues a run costs an attacker little more than nothing. */
const PATTERN_WEIGHT = 0.25;

interface Classes {
  readonly lower: boolean;
  readonly upper: boolean;
  readonly digit: boolean;
  readonly symbol: boolean;
  readonly other: boolean;
}

function classesOf(chars: readonly string[]): Classes {
  let lower = false;
  let upper = false;
  let digit = false;
  let symbol = false;
  let other = false;
  for (const char of chars) {
    if (/^[a-z]$/.test(char)) lower = true;
    else if (/^[A-Z]$/.test(char)) upper = true;
    else if (/^[0-9]$/.test(char)) digit = true;
    else if (/^[\x20-\x7e]$/.test(char)) symbol = true;
    else other = true;
  }
  return { lower, upper, digit, symbol, other };
}

/** How many characters an attacker would try per position, given the kinds of character used. */
function poolSize(classes: Classes): number {
  return (
    (classes.lower ? 26 : 0) +
    (classes.upper ? 26 : 0) +
    (classes.digit ? 10 : 0) +
    (classes.symbol ? 33 : 0) +
    // Other scripts: a large alphabet, but people pick words from it, so count it as a modest one.
    (classes.other ? 100 : 0)
  );
}

function keyboardNeighbours(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return KEYBOARD_ROWS.some((row) => {
    const i = row.indexOf(x);
    const j = row.indexOf(y);
    return i >= 0 && j >= 0 && Math.abs(i - j) === 1;
  });
}

/** Per character, whether it repeats the previous one, continues a run (abc, 123, qwerty) or repeats an earlier stretch. */
function predictable(chars: readonly string[]): boolean[] {
  const marks = chars.map(() => false);
  for (let i = 1; i < chars.length; i++) {
    const previous = chars[i - 1];
    const step = (chars[i].codePointAt(0) ?? 0) - (previous.codePointAt(0) ?? 0);
    if (step === 0 || Math.abs(step) === 1 || keyboardNeighbours(previous, chars[i])) marks[i] = true;
  }
  // Repeated stretches of three or more characters: the repeat adds next to nothing.
  for (let length = Math.floor(chars.length / 2); length >= 3; length--) {
    for (let first = 0; first + 2 * length <= chars.length; first++) {
      for (let copy = first + length; copy + length <= chars.length; copy++) {
        if (sameStretch(chars, first, copy, length)) for (let k = copy; k < copy + length; k++) marks[k] = true;
      }
    }
  }
  return marks;
}

function sameStretch(chars: readonly string[], a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (chars[a + k].toLowerCase() !== chars[b + k].toLowerCase()) return false;
  return true;
}

/** Character ranges [start, end) covered by common words, longest first, not overlapping. */
function commonWordRanges(chars: readonly string[]): (readonly [number, number])[] {
  // One UTF-16 unit per character (anything else becomes a NUL), so indexes stay those of `chars`.
  const plain = chars.map((char) => {
    const swapped = UNLEET[char] ?? char.toLowerCase();
    return swapped.length === 1 ? swapped : '\u0000';
  });
  const text = plain.join('');
  const covered = plain.map(() => false);
  const ranges: (readonly [number, number])[] = [];
  const words = [...COMMON_WORDS].sort((a, b) => b.length - a.length);
  for (const word of words) {
    let at = text.indexOf(word);
    while (at >= 0) {
      const end = at + word.length;
      if (!covered.slice(at, end).some(Boolean)) {
        for (let k = at; k < end; k++) covered[k] = true;
        ranges.push([at, end]);
      }
      at = text.indexOf(word, at + 1);
    }
  }
  return ranges;
}

/** The strength of `password` (NFC-normalized first, as the service does). */
export function estimateStrength(password: string): PasswordStrength {
  // Past 128 characters a password is strong anyway; the cap keeps the repeat search quick.
  const chars = [...password.normalize('NFC')].slice(0, 128);
  const classes = classesOf(chars);
  const perChar = chars.length === 0 ? 0 : Math.log2(poolSize(classes));
  const words = commonWordRanges(chars);
  const inWord = chars.map(() => false);
  for (const [start, end] of words) for (let k = start; k < end; k++) inWord[k] = true;
  const patterned = predictable(chars);

  let bits = words.length * COMMON_WORD_BITS;
  let patternCount = 0;
  for (let i = 0; i < chars.length; i++) {
    if (inWord[i]) continue;
    if (patterned[i]) {
      patternCount++;
      bits += perChar * PATTERN_WEIGHT;
    } else {
      bits += perChar;
    }
  }

  const hints: StrengthHint[] = [];
  if (words.length > 0) hints.push('common');
  // Worth mentioning when runs and repeats are a good part of it (not one "aa" in a long password).
  if (patternCount >= 3 || (chars.length > 0 && patternCount / chars.length >= 0.3)) hints.push('pattern');
  if (chars.length < GOOD_LENGTH) hints.push('length');
  const kinds = [classes.lower, classes.upper, classes.digit, classes.symbol, classes.other].filter(Boolean).length;
  if (kinds < 3) hints.push('variety');

  const rounded = Math.floor(bits);
  const level = LEVEL_BOUNDS.find(([bound]) => rounded < bound)?.[1] ?? 'strong';
  return { level, bits: rounded, hints: level === 'strong' ? [] : hints };
}
