import { describe, expect, it } from 'vitest';
import type { Item } from '../api/results';
import { fileType } from './file-types';
import { itemKey, nameStemLength, parentPath, splitIds } from './items';

const folder = (id: number, name = `folder ${id}`): Item => ({
  type: 'folder', id, dir: 0, name, time: '', size: 0, shared: false, linked: false, encrypted: false,
});
const file = (id: number, name = `file ${id}.txt`): Item => ({
  type: 'file', id, dir: 0, name, ext: 'txt', hash: '', time: '', size: 0, shared: false, linked: false, encrypted: false,
});

describe('item helpers', () => {
  it('keys tell folders and files with the same id apart', () => {
    expect(itemKey(folder(7))).toBe('d7');
    expect(itemKey(file(7))).toBe('f7');
  });

  it('the folder part of a path', () => {
    expect(parentPath('/Docs/Q3 & Q4/季度报告.txt')).toBe('/Docs/Q3 & Q4');
    expect(parentPath('/report.txt')).toBe('/');
    expect(parentPath('/')).toBe('/');
  });

  it('splits items into folder ids and file ids', () => {
    expect(splitIds([folder(1), file(1), file(2), folder(3)])).toEqual({ folders: [1, 3], files: [1, 2] });
  });

  it('a rename selects the name without its extension', () => {
    expect(nameStemLength(file(1, 'report.final.pdf'))).toBe(12);
    expect(nameStemLength(file(1, '.profile'))).toBe(8);
    expect(nameStemLength(file(1, 'README'))).toBe(6);
    expect(nameStemLength(folder(1, 'v1.2'))).toBe(4);
  });

  it('file types by extension, any case', () => {
    expect(fileType('jpg')).toBe('image');
    expect(fileType('PDF')).toBe('pdf');
    expect(fileType('xlsx')).toBe('spreadsheet');
    expect(fileType('tar')).toBe('archive');
    expect(fileType('')).toBe('other');
    expect(fileType('weird')).toBe('other');
  });
});
