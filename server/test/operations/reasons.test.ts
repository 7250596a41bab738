/** The list of refusal reasons (operations/reasons.ts) is the one source: every reason is thrown somewhere and documented. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_REASONS, REASONS } from '../../src/operations/reasons';

const root = path.resolve(__dirname, '../..');
const sources = readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts') && !file.endsWith('reasons.ts'))
  .map((file) => readFileSync(path.join(root, 'src', file), 'utf8'))
  .join('\n');
const protocol = readFileSync(path.join(root, '../docs/protocol.md'), 'utf8');

describe('refusal reasons', () => {
  it('are kebab-case and unique', () => {
    for (const reason of ALL_REASONS) expect(reason).toMatch(/^[a-z]+(-[a-z]+)*$/);
    expect(new Set(ALL_REASONS).size).toBe(ALL_REASONS.length);
  });

  it('are each given by some refusal of the service', () => {
    // `${kind}-not-found` (tree/id-lists.ts) names folder-not-found and file-not-found too.
    const given = (reason: string) => sources.includes(`'${reason}'`);
    expect(ALL_REASONS.filter((reason) => !given(reason))).toEqual([]);
  });

  it('are each documented in docs/protocol.md, in the row of their code', () => {
    const rows = new Map(protocol.split('\n').filter((line) => /^\| \d{3} \|/.test(line)).map((line) => [line.slice(2, 5), line]));
    for (const [code, reasons] of Object.entries(REASONS)) {
      for (const reason of reasons) expect(rows.get(code) ?? '', `${code} ${reason}`).toContain(`\`${reason}\``);
    }
  });
});
