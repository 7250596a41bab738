/**
 * The name rule as a class (issue 18, finding 7; docs/protocol.md §10.1), property-based, over the
 * wire against the whole service: every operation of the catalog that takes a name is sent random
 * names built from ordinary text and from every kind of character the rule is about (bidi
 * controls, noncharacters, separators, zero-width and other invisible characters, controls,
 * forbidden characters, white space, lone surrogates), in a random call form, and must
 *
 * - refuse with 400 exactly the names the rule (name-rule.ts) refuses, and change nothing then;
 * - refuse every name that holds a bidi control, a noncharacter or a separator, and every name
 *   with nothing visible (said here on its own, not through name-rule.ts);
 * - accept every other name, and list it back exactly as given (after NFC): never as "�".
 *
 * Operations are found through the catalog: a new parameter whose name ends in "name" fails the
 * test until it is listed below, as checked by the rule or as deliberately unused.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type OperationSpec } from '../../src/catalog/operations';
import { nameProblem } from '../../src/operations/tree/name-rule';
import { extensionOf } from '../../src/operations/tree/names';
import { startTestApp, type TestApp } from '../helpers/app-server';
import { addFolder, addFile as addFileRecord } from '../helpers/tree';
import type { Form } from '../helpers/requests';
import { reliabilityBudget, reliabilitySeed } from './budget';
import { ServiceClient } from './model/service-client';

const MAX_NAME = 255;

/** Every name parameter of the catalog: checked by the rule, or never stored nor shown (with why). */
const CHECKED = new Set(['FolderAdd.name', 'FolderRename.newname', 'FileRename.newname', 'FileAdd.name']);
const UNUSED = new Map([['ShareImageUpload.ImagefileName', 'the cover is recognized by its bytes; the name is neither stored nor shown']]);

const nameParams = operations.flatMap((op) => op.params.filter((p) => p.type === 'string' && /name$/i.test(p.name)).map((p) => ({ op, param: p.name })));

const RUNS = { quick: 20, ci: 60, long: 600 }[reliabilityBudget()];
const seed = reliabilitySeed();

// ---- Names ---------------------------------------------------------------------------------------

const chars = (...codePoints: number[]) => codePoints.map((cp) => String.fromCodePoint(cp));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

// The classes, written out here rather than taken from name-rule.ts, so that a rule that
// lost one of them fails this test.
const BIDI_CONTROLS = [0x061c, 0x200e, 0x200f, ...range(0x202a, 0x202e), ...range(0x2066, 0x2069)];
const SEPARATORS = [0x2028, 0x2029];
const isNoncharacter = (cp: number) => (cp >= 0xfdd0 && cp <= 0xfdef) || cp % 0x10000 === 0xfffe || cp % 0x10000 === 0xffff;

/** What the issue names, and its neighbours: each kind of character the rule is about. */
const TROUBLE = [
  ...chars(...BIDI_CONTROLS),
  ...chars(0xfdd0, 0xfdef, 0xfffe, 0xffff, 0x1fffe, 0x1ffff, 0x10fffe, 0x10ffff),
  ...chars(...SEPARATORS),
  // Zero-width and format characters, variation selectors, fillers, tags, blanks.
  ...chars(0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x00ad, 0x034f, 0x180e, 0xfe0f, 0x3164, 0xffa0, 0x2800, 0xe0001, 0xe0041, 0xe007f),
  // White space, controls, forbidden characters. (A lone surrogate has no UTF-8 form: the hostile
  // corpus sends its bytes, as invalid-utf8.)
  ' ', '\u00a0', '\u3000', '\t', '\u0000', '\u001f', '\u007f', '\u0085', '/', ':', '*', '?', '"', '<', '>', '|', '\\',
];

const ORDINARY = ['a', 'Z', '7', ' ', '.', '-', '_', '(', ')', 'é', 'e\u0301', 'ß', 'Ж', '文', 'ق', 'א', '😀', '👩\u200d💻', 'می\u200cخواهم', '🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}'];

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const nameArbitrary = fc.oneof(
  { weight: 6, arbitrary: fc.array(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...ORDINARY) }, { weight: 2, arbitrary: fc.constantFrom(...TROUBLE) }), { minLength: 0, maxLength: 10 }).map((parts) => parts.join('')) },
  { weight: 2, arbitrary: fc.array(fc.constantFrom(...TROUBLE.filter((c) => isInvisible(c)), ' '), { minLength: 1, maxLength: 6 }).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }).filter((text) => !LONE_SURROGATE.test(text)) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: MAX_NAME - 3, max: MAX_NAME + 2 }), fc.constantFrom(...TROUBLE, 'x')).map(([n, c]) => 'x'.repeat(n - 1) + c) },
);

/** Zero-width, format and filler characters and white space: what shows as nothing (stated here, apart from the rule). */
function isInvisible(character: string): boolean {
  return /^[\s\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\u{e0000}-\u{e0fff}\u061c]+$/u.test(character);
}

/** The classes, said on their own: a name that holds any of these must be refused. */
function mustBeRefused(name: string): boolean {
  const codePoints = Array.from(name.normalize('NFC'), (c) => c.codePointAt(0)!);
  return (
    codePoints.some((cp) => BIDI_CONTROLS.includes(cp) || SEPARATORS.includes(cp) || isNoncharacter(cp)) ||
    (name.length > 0 && isInvisible(name))
  );
}

/** XML 1.0 cannot carry these: such a name goes in an HTTP form. */
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const formFor = (form: Form, name: string): Form => ((form === 'soap11' || form === 'soap12') && (NOT_XML.test(name) || name.includes('\r')) ? 'post' : form);

// ---- The service ---------------------------------------------------------------------------------

let app: TestApp;
let client: ServiceClient;
let accountId: number;
/** Content the account owns: FileAdd records new files of it without an upload ("instant upload"). */
let owned: { sha256: string; size: number };
let parents = 0;

beforeAll(async () => {
  app = await startTestApp();
  client = await ServiceClient.forNewAccount(app, 'namer');
  accountId = client.session.uid;
  const file = await addFileRecord(app.app.services, accountId, 0, 'owned.bin', 3);
  const row = await app.app.services.db.selectFrom('files').select(['sha256', 'size']).where('id', '=', file.id).executeTakeFirstOrThrow();
  owned = { sha256: row.sha256, size: Number(row.size) };
});
afterAll(() => app?.close());

/** A fresh, empty folder for one try, so that a name can never be taken already. */
const freshFolder = () => addFolder(app.app.services, accountId, 0, `try ${++parents}`);

interface Attempt {
  /** The call with `name` in the operation's name parameter. */
  readonly send: (form: Form, name: string) => Promise<{ code: number; name?: string }>;
  /** The names in the folder the call touched, read over the wire. */
  readonly listed: () => Promise<string[]>;
}

/** How each checked operation is called with a name, everything else valid. */
async function prepare(opName: string): Promise<Attempt> {
  const parent = await freshFolder();
  const listed = async () => (await client.call('post', 'GetFiles', { dir: parent.id, order: 'name', desc: '0' })).items.map((item) => item.attrs.name);
  const answer = async (form: Form, op: string, params: Record<string, string | number>) => {
    const out = await client.call(form, op, params);
    return { code: out.code, name: out.items[0]?.attrs.name };
  };
  switch (opName) {
    case 'FolderAdd':
      return { send: (form, name) => answer(form, 'FolderAdd', { dirid: parent.id, name }), listed };
    case 'FileAdd':
      return {
        send: (form, name) => answer(form, 'FileAdd', { name, ext: extensionOf(name.normalize('NFC')), size: owned.size, dirid: parent.id, hash: owned.sha256 }),
        listed,
      };
    case 'FolderRename': {
      const folder = await addFolder(app.app.services, accountId, parent.id, 'before');
      return { send: (form, name) => answer(form, 'FolderRename', { dirid: folder.id, newname: name }), listed };
    }
    case 'FileRename': {
      const file = await addFileRecord(app.app.services, accountId, parent.id, 'before.txt', 1);
      return { send: (form, name) => answer(form, 'FileRename', { fid: file.id, newname: name }), listed };
    }
    default:
      throw new Error(`no way to call ${opName} with a name: add one to prepare()`);
  }
}

describe('every name the catalog takes', () => {
  it('is listed here: checked by the name rule, or never stored nor shown', () => {
    const found = nameParams.map(({ op, param }) => `${op.name}.${param}`).sort();
    expect(found).toEqual([...CHECKED, ...UNUSED.keys()].sort());
  });
});

describe.each([...CHECKED])('%s, with random names in random forms', (checked) => {
  const [opName] = checked.split('.');
  const op: OperationSpec = operations.find((o) => o.name === opName)!;

  it('refuses (400, changing nothing) exactly what the rule refuses, and lists every other name exactly as given', async () => {
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(nameArbitrary, fc.constantFrom<Form>('soap11', 'soap12', 'get', 'post'), async (name, chosen) => {
        const attempt = await prepare(op.name);
        const before = await attempt.listed();
        const form = formFor(chosen, name);
        const answer = await attempt.send(form, name);
        const nfc = name.normalize('NFC');
        const problem = nameProblem(nfc, MAX_NAME);
        if (mustBeRefused(name)) expect(problem, 'the rule must refuse it').not.toBeNull();
        if (problem) {
          refused++;
          expect(answer.code, `${JSON.stringify(name)} over ${form}: ${problem.kind}`).toBe(400);
          expect(await attempt.listed()).toEqual(before);
        } else {
          expect(answer.code, `${JSON.stringify(name)} over ${form}`).toBe(0);
          expect(answer.name).toBe(nfc);
          expect(await attempt.listed()).toContain(nfc);
        }
      }),
      { numRuns: RUNS, seed },
    );
    // The names are meant to hit both sides of the rule.
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThan(RUNS);
  }, 120_000);
});

const FORMS: readonly Form[] = ['soap11', 'soap12', 'get', 'post'];
const NONCHARACTERS = [...range(0xfdd0, 0xfdef), ...range(0, 16).flatMap((plane) => [plane * 0x10000 + 0xfffe, plane * 0x10000 + 0xffff])];
/** Invisible characters, each range by its ends and a middle: alone, or several, a name shows nothing. */
const INVISIBLES = [0x00ad, 0x034f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180b, 0x180e, 0x180f, 0x200b, 0x200c, 0x200d, 0x2060, 0x2064, 0x206f, 0x2800, 0x3164, 0xfe00, 0xfe0f, 0xfeff, 0xffa0, 0x1bca0, 0x1bca3, 0x1d173, 0x1d17a, 0xe0000, 0xe0041, 0xe0fff];

describe.each([...CHECKED])('%s, with every character of each class', (checked) => {
  const opName = checked.split('.')[0];

  it('refuses each bidi control, separator and noncharacter inside a name, and each invisible character making up a name (400, changing nothing)', async () => {
    const attempt = await prepare(opName);
    const before = await attempt.listed();
    const names = [
      ...[...BIDI_CONTROLS, ...SEPARATORS, ...NONCHARACTERS].map((cp) => `report${String.fromCodePoint(cp)}.txt`),
      ...INVISIBLES.map((cp) => String.fromCodePoint(cp)),
      ...INVISIBLES.map((cp) => `${String.fromCodePoint(cp)} ${String.fromCodePoint(cp)}\u200b`),
    ];
    const wrong: string[] = [];
    for (const [i, name] of names.entries()) {
      const form = formFor(FORMS[i % FORMS.length], name);
      const { code } = await attempt.send(form, name);
      if (code !== 400) wrong.push(`${JSON.stringify(name)} over ${form}: ${code}`);
    }
    expect(wrong).toEqual([]);
    expect(await attempt.listed()).toEqual(before);
  }, 60_000);
});

describe('the probe of the issue', () => {
  it('"\\u202egnp.exe" is refused by every operation that takes a name, in every form', async () => {
    for (const checked of CHECKED) {
      for (const form of FORMS) {
        const attempt = await prepare(checked.split('.')[0]);
        expect((await attempt.send(form, '\u202egnp.exe')).code, `${checked} over ${form}`).toBe(400);
      }
    }
  });
});
