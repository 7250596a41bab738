import { describe, expect, it } from 'vitest';
import { estimateStrength } from './password-strength';

const level = (password: string) => estimateStrength(password).level;

describe('estimateStrength', () => {
  it('calls an empty or short password weak, and says to make it longer', () => {
    expect(estimateStrength('')).toMatchObject({ level: 'weak', bits: 0 });
    expect(level('k9x')).toBe('weak');
    expect(estimateStrength('k9x').hints).toContain('length');
  });

  it('calls very common passwords weak, with a digit or symbol added or letters swapped for digits', () => {
    for (const password of ['password', 'Password1', 'P@ssw0rd!', 'letmein2024', 'iloveyou!', 'qwerty123', 'Dragon99']) {
      const strength = estimateStrength(password);
      expect(strength.level, password).toBe('weak');
      expect(strength.hints, password).toContain('common');
    }
  });

  it('calls runs and repeats weak: they add almost nothing', () => {
    for (const password of ['aaaaaaaaaaaa', '123456789012', 'abcdefghijkl', 'qwertyuiop', '987654321', 'xyzxyzxyzxyz']) {
      const strength = estimateStrength(password);
      expect(strength.level, password).toBe('weak');
      expect(strength.hints, password).toContain('pattern');
    }
  });

  it('counts a repeated stretch once', () => {
    expect(estimateStrength('k7Rq2k7Rq2').bits).toBeLessThan(estimateStrength('k7Rq2w9Lm4').bits);
    expect(estimateStrength('Hq8sHq8s').bits).toBeLessThan(estimateStrength('Hq8sJ3fW').bits);
  });

  it('rises with length and with the kinds of character used', () => {
    expect(estimateStrength('kdmwpqzt').bits).toBeLessThan(estimateStrength('kdmwpqztrv').bits);
    expect(estimateStrength('kdmwpqzt').bits).toBeLessThan(estimateStrength('kDmW9qz!').bits);
    expect(estimateStrength('kdmwpqzt').hints).toContain('variety');
  });

  it('grades a fair, a good and a strong password', () => {
    expect(level('mydogmax')).toBe('fair');
    expect(level('Mango-42x')).toBe('good');
    expect(level('correct horse battery staple')).toBe('strong');
    expect(level('xK9#mP2$vL5@')).toBe('strong');
  });

  it('gives no hints for a strong password', () => {
    expect(estimateStrength('correct horse battery staple').hints).toEqual([]);
  });

  it('takes letters of other scripts as characters', () => {
    expect(level('我的')).toBe('weak');
    expect(estimateStrength('春眠不觉晓处处闻啼鸟').bits).toBeGreaterThan(estimateStrength('春眠').bits);
  });

  it('normalizes first: a composed and a decomposed accent are the same password', () => {
    expect(estimateStrength('Caf\u00e9-Noir-42')).toEqual(estimateStrength('Cafe\u0301-Noir-42'));
  });
});
