import { describe, expect, it } from 'vitest';
import { validName } from '../../server/src/operations/tree/names';
import { checkName, nameProblemMessage } from './name-check';

/** What the service answers for a name: its message, or null when it takes the name. */
function serviceVerdict(name: string): string | null {
  try {
    validName(name, 255);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('checkName', () => {
  it.each([
    '\u202egnp.exe',
    'report\u200e.pdf',
    'non\ufffechar',
    '\u200b',
    '\u200b\u200d ',
    'a\u2028b',
    'a/b',
    ' lead',
    '..',
    'x'.repeat(256),
    'e\u0301'.repeat(255),
    'Q3 report.pdf',
    '👩\u200d💻',
    'می\u200cخواهم',
  ])('refuses %j exactly as the service does, with its message', (name) => {
    const problem = checkName(name);
    expect(problem ? nameProblemMessage(problem) : null).toBe(serviceVerdict(name));
  });
});
