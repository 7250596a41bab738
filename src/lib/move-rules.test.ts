import { describe, expect, it } from 'vitest';
import { byFolder, moveRefusal } from './move-rules';

const folder = (id: number, dir: number) => ({ type: 'folder', id, dir }) as const;
const file = (id: number, dir: number) => ({ type: 'file', id, dir }) as const;

describe('moveRefusal', () => {
  it('refuses a folder moved onto itself', () => {
    expect(moveRefusal([folder(5, 1)], [0, 1, 5])).toBe('intoItself');
  });

  it('refuses a folder moved into its own subfolder, at any depth', () => {
    expect(moveRefusal([file(9, 1), folder(5, 1)], [0, 1, 5, 7, 8])).toBe('intoItself');
  });

  it('a file may go into a folder whose id is also a file id (ids are counted separately)', () => {
    expect(moveRefusal([file(5, 1)], [0, 1, 5])).toBeNull();
  });

  it('says when every item is in the destination already; one item elsewhere makes it a move', () => {
    expect(moveRefusal([file(2, 1), folder(3, 1)], [0, 1])).toBe('alreadyThere');
    expect(moveRefusal([file(2, 1), file(4, 6)], [0, 1])).toBeNull();
  });

  it('takes the root as a destination', () => {
    expect(moveRefusal([folder(3, 1)], [0])).toBeNull();
    expect(moveRefusal([file(3, 0)], [0])).toBe('alreadyThere');
  });
});

describe('byFolder', () => {
  it('groups items by the folder they are in, keeping their order', () => {
    const groups = byFolder([file(1, 4), folder(2, 0), file(3, 4)]);
    expect([...groups.entries()]).toEqual([
      [4, [file(1, 4), file(3, 4)]],
      [0, [folder(2, 0)]],
    ]);
  });
});
