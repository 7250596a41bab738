/** The bounded map of every cache (src/lru.ts): its bound, its order, and what it does not keep. */
import { describe, expect, it } from 'vitest';
import { Lru } from '../src/lru';

describe('Lru', () => {
  it('holds at most its budget by weight, letting the least recently used go first', () => {
    const lru = new Lru<string, number>(10);
    lru.set('a', 1, 4);
    lru.set('b', 2, 4);
    lru.get('a');
    lru.set('c', 3, 4);
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([1, undefined, 3]);
    expect(lru.weight).toBe(8);
  });

  it('does not keep a value heavier than its whole budget, and a budget of 0 keeps nothing', () => {
    const lru = new Lru<string, number>(10);
    lru.set('a', 1, 11);
    expect(lru.size).toBe(0);
    const off = new Lru<string, number>(0);
    off.set('a', 1);
    expect(off.get('a')).toBeUndefined();
  });

  it('replacing a value gives back the weight of the one it replaces', () => {
    const lru = new Lru<string, number>(10);
    lru.set('a', 1, 6);
    lru.set('a', 2, 9);
    expect([lru.get('a'), lru.weight, lru.size]).toEqual([2, 9, 1]);
    lru.delete('a');
    expect(lru.weight).toBe(0);
  });

  it('never lets go of a value used at least once every half bound of new values, whatever else comes', () => {
    const lru = new Lru<string, number>(10);
    lru.set('hot', 0);
    for (let i = 0; i < 1000; i++) {
      lru.set(`cold${i}`, i);
      if (i % 5 === 4) expect(lru.get('hot')).toBe(0);
      expect(lru.size).toBeLessThanOrEqual(10);
    }
    // The others went in the order they came: the newest are kept.
    expect(lru.get('cold989')).toBeUndefined();
    expect(lru.get('cold999')).toBe(999);
  });
});
