import { describe, expect, it } from 'vitest';
import { filterByName } from './name-filter';

const items = [{ name: 'Holiday Photos' }, { name: 'notes 2026.txt' }, { name: 'Café menu.pdf' }];

describe('filterByName', () => {
  it('keeps every item, the same array, for an empty or blank query', () => {
    expect(filterByName(items, '')).toBe(items);
    expect(filterByName(items, '   ')).toBe(items);
  });

  it('matches a part of the name, ignoring case', () => {
    expect(filterByName(items, 'PHOTO')).toEqual([{ name: 'Holiday Photos' }]);
  });

  it('needs every word typed, in any order', () => {
    expect(filterByName(items, 'photos holiday')).toEqual([{ name: 'Holiday Photos' }]);
    expect(filterByName(items, 'photos 2026')).toEqual([]);
  });

  it('compares composed and decomposed accents as the same letters', () => {
    expect(filterByName(items, 'cafe\u0301')).toEqual([{ name: 'Café menu.pdf' }]);
  });
});
