import { describe, expect, it } from 'vitest';
import { DEFAULT_SORT } from '../api/files';
import { nextSort, sortFromParams, withSort } from './use-sort-param';

describe('sort orders in the address', () => {
  it('reads order and desc, and falls back for a missing or unknown order', () => {
    expect(sortFromParams(new URLSearchParams('order=size&desc=1'), DEFAULT_SORT)).toEqual({ order: 'size', desc: true });
    expect(sortFromParams(new URLSearchParams('order=time&desc=0'), DEFAULT_SORT)).toEqual({ order: 'time', desc: false });
    expect(sortFromParams(new URLSearchParams('order=NAME&desc=1'), DEFAULT_SORT)).toEqual(DEFAULT_SORT);
    expect(sortFromParams(new URLSearchParams(''), { order: 'time', desc: true })).toEqual({ order: 'time', desc: true });
  });

  it('writes order and desc and keeps the other parameters', () => {
    const params = withSort(new URLSearchParams('q=report'), { order: 'link', desc: true });
    expect(params.toString()).toBe('q=report&order=link&desc=1');
  });

  it('choosing the current key turns the order around', () => {
    expect(nextSort({ order: 'size', desc: true }, 'size')).toEqual({ order: 'size', desc: false });
    expect(nextSort({ order: 'name', desc: false }, 'name')).toEqual({ order: 'name', desc: true });
  });

  it('a new key starts A to Z for names, and newest, largest, shared or linked first for the others', () => {
    expect(nextSort({ order: 'size', desc: false }, 'name')).toEqual({ order: 'name', desc: false });
    expect(nextSort(DEFAULT_SORT, 'time')).toEqual({ order: 'time', desc: true });
    expect(nextSort(DEFAULT_SORT, 'size')).toEqual({ order: 'size', desc: true });
    expect(nextSort(DEFAULT_SORT, 'share')).toEqual({ order: 'share', desc: true });
    expect(nextSort(DEFAULT_SORT, 'link')).toEqual({ order: 'link', desc: true });
  });
});
