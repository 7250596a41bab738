import { describe, expect, it } from 'vitest';
import { withSuffix } from '../../../server/src/operations/tree/names';
import { numberedName } from './name-conflicts';

describe('numberedName', () => {
  it("numbers names as the service does (names.ts withSuffix), so Keep both of a move asks for the service's own names", () => {
    const samples: [string, boolean][] = [['report.pdf', true], ['a.tar.GZ', true], ['.profile', true], ['notes...', true], ['Photos', false], ['v1.2', false], ['README', true]];
    for (const [name, isFile] of samples) expect(numberedName(name, isFile, 3), name).toBe(withSuffix(name, ' (3)', isFile));
  });
});
