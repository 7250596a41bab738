import { describe, expect, it } from 'vitest';
import { passwordProblem, tipProblem } from './encryption-rules';

describe('passwordProblem', () => {
  it('takes 4 to 64 characters', () => {
    expect(passwordProblem('abc')).toBe('length');
    expect(passwordProblem('abcd')).toBeNull();
    expect(passwordProblem('x'.repeat(64))).toBeNull();
    expect(passwordProblem('x'.repeat(65))).toBe('length');
    expect(passwordProblem('')).toBe('length');
  });

  it('counts characters, not UTF-16 units: four emoji are four characters', () => {
    expect(passwordProblem('😀😀😀')).toBe('length');
    expect(passwordProblem('😀😀😀😀')).toBeNull();
    expect(passwordProblem('😀'.repeat(64))).toBeNull();
    expect(passwordProblem('😀'.repeat(65))).toBe('length');
  });

  it('counts after NFC, as the service does: e + combining accent is one character', () => {
    const decomposed = 'cafe\u0301'; // five code points, four after NFC
    expect([...decomposed]).toHaveLength(5);
    expect(passwordProblem(decomposed.repeat(16))).toBeNull(); // 64 after NFC, 80 before
    expect(passwordProblem('abe\u0301')).toBe('length'); // three after NFC
  });
});

describe('tipProblem', () => {
  it('takes no hint, or one of at most 100 characters', () => {
    expect(tipProblem('', 'secret-1')).toBeNull();
    expect(tipProblem('x'.repeat(100), 'secret-1')).toBeNull();
    expect(tipProblem('x'.repeat(101), 'secret-1')).toBe('length');
  });

  it('refuses a hint that contains the password, in any case', () => {
    expect(tipProblem('my cat Tiger', 'tiger')).toBe('containsPassword');
    expect(tipProblem('TIGER', 'tiger')).toBe('containsPassword');
    expect(tipProblem('tig er', 'tiger')).toBeNull();
    expect(tipProblem('the striped one', 'tiger')).toBeNull();
  });

  it('compares after NFC, so a differently composed accent still counts', () => {
    expect(tipProblem('at the cafe\u0301', 'café')).toBe('containsPassword');
  });
});
