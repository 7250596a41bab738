/**
 * Names of files and folders (DECISIONS.md §7): what is allowed, what collides, how names sort and
 * how a taken name is numbered. Collisions in a real folder are in folders.test.ts.
 */
import { describe, expect, test } from 'vitest';
import { OpError, ResultCode } from '../../src/operations/errors';
import {
  extensionOf,
  firstFreeName,
  nameKey,
  naturalSortKey,
  numberedNameKeys,
  storedName,
  validName,
  withSuffix,
} from '../../src/operations/tree/names';

const MAX = 255;

function refusal(raw: string | null, what?: string): OpError {
  try {
    validName(raw, MAX, what);
  } catch (error) {
    expect(error).toBeInstanceOf(OpError);
    expect((error as OpError).code).toBe(ResultCode.InvalidArgument);
    return error as OpError;
  }
  throw new Error(`${JSON.stringify(raw)} was accepted`);
}

describe('validName', () => {
  test.each(['/', '\\', ':', '*', '?', '"', '<', '>', '|'])('refuses %s, naming the character', (char) => {
    expect(refusal(`a${char}b`).message).toBe(`name may not contain "${char}"`);
  });

  test.each(['\u0000', '\u0009', '\u000a', '\u001f', '\u007f', '\u0085', '\u009f'])('refuses the control character U+%s', (char) => {
    expect(refusal(`a${char}b`).message).toBe('name may not contain control characters');
  });

  test.each(['.', '..'])('refuses %j', (name) => {
    expect(refusal(name).message).toBe('name may not be "." or ".."');
  });

  test('accepts names made of dots that are not "." or ".."', () => {
    expect(validName('...', MAX)).toBe('...');
    expect(validName('.profile', MAX)).toBe('.profile');
  });

  test.each([' a', 'a ', ' ', '\u00a0a', 'a\u3000'])('refuses leading or trailing spaces: %j', (name) => {
    expect(refusal(name).message).toBe('name may not begin or end with spaces');
  });

  test('accepts spaces inside a name', () => {
    expect(validName('my  report.pdf', MAX)).toBe('my  report.pdf');
  });

  test('refuses an empty or missing name', () => {
    expect(refusal('').message).toBe('name is empty');
    expect(refusal(null).message).toBe('name is empty');
  });

  test('accepts 255 characters and refuses 256', () => {
    expect(validName('x'.repeat(255), MAX)).toHaveLength(255);
    expect(refusal('x'.repeat(256)).message).toBe('name is longer than 255 characters');
  });

  test('counts characters, not UTF-16 units: 255 emoji are allowed', () => {
    expect(validName('😀'.repeat(255), MAX)).toBe('😀'.repeat(255));
    expect(refusal('😀'.repeat(256)).code).toBe(ResultCode.InvalidArgument);
  });

  test('counts the length after NFC: 255 decomposed "é" are 255 characters', () => {
    expect(validName('e\u0301'.repeat(255), MAX)).toBe('\u00e9'.repeat(255));
  });

  test('refuses a lone surrogate', () => {
    expect(refusal('a\ud800b').message).toBe('name is not valid Unicode');
  });

  test.each([0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069])(
    'refuses the bidirectional text control %s anywhere, naming it',
    (codePoint) => {
      const label = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
      expect(refusal(`${String.fromCodePoint(codePoint)}gnp.exe`).message).toBe(`name may not contain ${label} (a bidirectional text control)`);
      expect(refusal(`report${String.fromCodePoint(codePoint)}.pdf`, 'newname').message).toBe(`newname may not contain ${label} (a bidirectional text control)`);
    },
  );

  test.each([0xfdd0, 0xfdef, 0xfffe, 0xffff, 0x1fffe, 0x1ffff, 0x10fffe, 0x10ffff])('refuses the noncharacter %s', (codePoint) => {
    expect(refusal(`a${String.fromCodePoint(codePoint)}b`).message).toMatch(/^name may not contain U\+[0-9A-F]{4,6} \(a noncharacter\)$/);
  });

  test.each(['\u2028', '\u2029'])('refuses a line or paragraph separator inside a name: %j', (separator) => {
    expect(refusal(`a${separator}b`).message).toMatch(/^name may not contain U\+202[89] \(a line or paragraph separator\)$/);
  });

  test.each(['\u200b', '\u200b\u200c\u200d', '\u2060', '\u00ad', '\ufe0f', '\u3164', '\u2800', '\u{e0041}', '\u200b \u200b'])(
    'refuses a name with nothing visible: %j',
    (name) => {
      expect(refusal(name).message).toBe('name has no visible character');
    },
  );

  test.each([
    ['an emoji sequence joined by ZWJ', '👩\u200d💻 notes'],
    ['Persian with a ZWNJ', 'می\u200cخواهم.txt'],
    ['an emoji with a variation selector at the end', 'I ❤\ufe0f'],
    ['the flag of England (tag characters)', '🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}'],
    ['a zero-width space between letters', 'a\u200bb'],
    ['a soft hyphen inside a word', 'Donau\u00addampf'],
    ['U+FFFD itself', 'broken \ufffd.txt'],
    ['a private-use character', 'logo \ue000'],
  ])('accepts %s', (_label, name) => {
    expect(validName(name, MAX)).toBe(name.normalize('NFC'));
  });

  test('returns the name in NFC', () => {
    expect(validName('Cafe\u0301', MAX)).toBe('Caf\u00e9');
  });

  test('names the parameter in its message', () => {
    expect(refusal('a/b', 'newname').message).toBe('newname may not contain "/"');
  });
});

describe('nameKey: what "the same name" means', () => {
  test('"é" composed and decomposed are the same name', () => {
    expect(nameKey('caf\u00e9')).toBe(nameKey('cafe\u0301'));
  });

  test('case does not matter, in every script: "Файл" and "файл"', () => {
    expect(nameKey('Файл')).toBe(nameKey('файл'));
    expect(nameKey('REPORT.PDF')).toBe(nameKey('report.pdf'));
    expect(nameKey('ΑΡΧΕΙΟ')).toBe(nameKey('αρχειο'));
  });

  test('different names stay different', () => {
    expect(nameKey('Файл')).not.toBe(nameKey('Фаил'));
  });
});

describe('naturalSortKey', () => {
  test('orders numbers by value and ignores case', () => {
    const names = ['file10', 'File2', 'file1', 'a', 'B'];
    expect([...names].sort((a, b) => (naturalSortKey(a) < naturalSortKey(b) ? -1 : 1))).toEqual(['a', 'B', 'file1', 'File2', 'file10']);
  });

  test('storedName carries the name, its key and its sort key', () => {
    expect(storedName('File2.PDF')).toEqual({ name: 'File2.PDF', key: 'file2.pdf', sortKey: naturalSortKey('File2.PDF') });
  });
});

describe('extensions and numbered names', () => {
  test.each([
    ['report.pdf', 'pdf'],
    ['a.tar.GZ', 'gz'],
    ['.profile', ''],
    ['README', ''],
    ['trailing.', ''],
  ])('the extension of %j is %j', (name, ext) => {
    expect(extensionOf(name)).toBe(ext);
  });

  test('a suffix goes before a file extension, and at the end of a folder name', () => {
    expect(withSuffix('report.pdf', ' (1)', true)).toBe('report (1).pdf');
    expect(withSuffix('v1.2', ' (1)', false)).toBe('v1.2 (1)');
  });

  test('firstFreeName counts up past the taken numbers', () => {
    const taken = new Set(['report.pdf', 'report (1).pdf']);
    expect(firstFreeName('Report.pdf', true, taken)).toBe('Report (2).pdf');
    expect(firstFreeName('other.pdf', true, taken)).toBe('other.pdf');
  });

  test('numberedNameKeys gives the key around the number', () => {
    expect(numberedNameKeys('Report.PDF', true)).toEqual({ prefix: 'report (', suffix: ').pdf' });
    expect(numberedNameKeys('Photos', false)).toEqual({ prefix: 'photos (', suffix: ')' });
  });

  test('numberedNameKeys lowers case as the numbered name does (Greek final sigma)', () => {
    const { prefix, suffix } = numberedNameKeys('ΟΔΟΣ.txt', true);
    expect(`${prefix}1${suffix}`).toBe(nameKey(withSuffix('ΟΔΟΣ.txt', ' (1)', true)));
  });
});
