/**
 * What a token alone can do (docs/protocol.md §5.6): the sign is what keeps a leaked token (a
 * proxy's log of an upload's bearer header, a URL in a history) from acting as its account, so an
 * operation that takes no sign must never widen who can see anything, nor reveal a share code, a
 * link code or a download URL.
 *
 * Every operation the catalog does not mark `signed` (found from the catalog: a new one is probed
 * without anyone listing it) is called in the four forms with only what a holder of alice's token
 * has: her uid and token, and ids of every kind of item the world holds (hers: live, shared, with a
 * share of its own, linked, encrypted, in the bin; bob's; an id no item has). Every other text
 * parameter gets "" and then the token itself (as a share code, an extraction code, a password, an
 * API key), the bytes a real image. After each call:
 * - nothing that decides who can see what has changed: the shares (which items, their codes,
 *   extraction codes, limits and counts), links, e-mail messages, the items (bin, encryption,
 *   flags), encryption keys, sessions and their unlocks. A share's cover image may change: that
 *   is what ShareImageUpload is for, on a share its owner made; and its owner's used bytes with
 *   it, by exactly the cover's bytes (covers count against the quota), by nothing else;
 * - the answer carries no share code, link code or extraction code of either account, and no
 *   share, link or download URL;
 * - an anonymous operation (the ShareService, Login, APILogin) opened nothing and let no one in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type OperationSpec, type ParamSpec } from '../../src/catalog/operations';
import type { Services } from '../../src/operations/context';
import { element, type Session } from '../helpers/app-server';
import { FORMS, type Form } from '../helpers/requests';
import { layer2Code } from './corpus/answers';
import { idParamOf, type ItemKind } from './corpus/id-params';
import { callRequest, sendRaw, type ParamTexts } from './corpus/wire';
import { buildWorld, callOk, MISSING_ID, worldState, type World } from './corpus/world';

/** A 1×1 PNG: the image ShareImageUpload takes. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
/** The extraction code of the share of alice's own file (notes.txt). */
const EXTRACTION_CODE = 'Hush-4207';

const UNSIGNED = operations.filter((op) => op.auth !== 'signed');

let world: World;
/** The ids of each kind, of both accounts, and one no item has. */
const ids: Record<ItemKind, number[]> = { folder: [], file: [] };

beforeAll(async () => {
  world = await buildWorld();
  // A file with a share of its own, with an extraction code: what ShareImageUpload may give a cover.
  await callOk(world, world.owner, 'FileService', 'FileShare', { fids: String(world.alices.file), downpwd: EXTRACTION_CODE, downValue: 3, description: '' });
  const { db } = world.app.app.services;
  for (const [kind, table] of [['folder', 'folders'], ['file', 'files']] as const) {
    ids[kind] = [...(await db.selectFrom(table).select('id').orderBy('id').execute()).map((row) => row.id), MISSING_ID];
  }
}, 120_000);
afterAll(() => world?.app.close());

type AccountState = Awaited<ReturnType<typeof worldState>>['alice'];

/**
 * An account's state with its covers taken out: its shares without their cover image (its key,
 * its bytes, the time it was set), and its used bytes less the bytes its covers count, so that
 * used bytes that move by anything but a cover still show.
 */
function withoutCovers(state: AccountState) {
  const coverBytes = state.shares.reduce((total, share) => total + Number(share.image_bytes), 0);
  return {
    ...state,
    account: { ...state.account, used_bytes: Number(state.account.used_bytes) - coverBytes },
    shares: state.shares.map(({ image_key: _key, image_bytes: _bytes, updated_at: _updated, ...share }) => share),
  };
}

/** What decides who can see what, for both accounts: worldState without covers, with every session and unlock. */
async function visibility(services: Services) {
  const state = await worldState(world);
  const { db } = services;
  return {
    alice: withoutCovers(state.alice),
    bob: withoutCovers(state.bob),
    sessions: await db.selectFrom('tokens').select(['id', 'account_id', 'expires_at']).orderBy('id').execute(),
    unlocks: await db.selectFrom('unlocks').select(['token_id', 'key_id']).orderBy('token_id').orderBy('key_id').execute(),
  };
}

/** Every share code, link code and extraction code of both accounts. */
async function secretsOf(services: Services): Promise<string[]> {
  const { db } = services;
  const shares = (await db.selectFrom('shares').select('code').execute()).map((row) => row.code);
  const links = (await db.selectFrom('links').select('code').execute()).map((row) => row.code);
  return [...shares, ...links, EXTRACTION_CODE];
}

/** A URL that opens a share, a link or a download: what an unsigned answer may never carry. A cover image URL (/s/image/…) opens nothing else. */
const CAPABILITY_URL = /\/s\/(?!image\/)[A-Za-z0-9_-]{8,}|\/l\/[A-Za-z0-9_-]{8,}|\/d\/[A-Za-z0-9_.-]{16,}/;

/** The text of a parameter that is neither uid, token nor an item id, in one of two variants. */
function otherText(param: ParamSpec, variant: 'empty' | 'token', token: string): string {
  if (param.type === 'base64Binary') return PNG.toString('base64');
  if (param.name === 'order') return 'name';
  if (param.name === 'desc') return '0';
  if (param.type === 'long' || param.type === 'int') return '0';
  return variant === 'empty' ? '' : token;
}

/** The calls of one operation: every id of the kind its id parameter names (or none), times both variants. */
function callsOf(op: OperationSpec, session: Session): ParamTexts[] {
  const idParam = op.params.map((param) => idParamOf(op, param)).find((entry) => entry !== null);
  const idValues = idParam ? ids[idParam.kind] : [null];
  const calls: ParamTexts[] = [];
  for (const id of idValues) {
    for (const variant of ['empty', 'token'] as const) {
      const texts: ParamTexts = {};
      for (const param of op.params) {
        if (param.name === 'uid') texts.uid = String(session.uid);
        else if (param.name === 'token') texts.token = session.token;
        else if (idParam && param.name === idParam.param.name) texts[param.name] = String(id);
        else texts[param.name] = otherText(param, variant, session.token);
      }
      calls.push(texts);
    }
  }
  return calls;
}

describe('the catalog', () => {
  it('has unsigned operations, and the probe knows each one by its auth', () => {
    expect(UNSIGNED.map((op) => op.name)).toEqual(expect.arrayContaining(['ShareImageUpload', 'Login', 'APILogin', 'ShareOpen', 'ShareList', 'ShareDownload']));
    for (const op of UNSIGNED) expect(['none', 'token']).toContain(op.auth);
  });
});

describe.each(UNSIGNED.map((op) => [`${op.service}.${op.name} (${op.auth})`, op] as const))('%s with only a token', (_name, op) => {
  it.each(FORMS)('over %s: widens nothing and reveals no code or capability URL', async (form: Form) => {
    const { services } = world.app.app;
    const before = await visibility(services);
    const secrets = await secretsOf(services);
    const problems: string[] = [];
    const codes: string[] = [];
    for (const texts of callsOf(op, world.alice)) {
      const answer = await sendRaw(world.app.url, callRequest(op, form, texts));
      const what = `${op.name}(${Object.entries(texts)
        .filter(([name]) => name !== 'byteFileStream')
        .map(([name, text]) => `${name}=${text === world.alice.token ? '<token>' : text}`)
        .join(', ')})`;
      const code = layer2Code(answer.body, op);
      if (answer.status !== 200 || code === null) problems.push(`${what}: not a layer-2 answer (${answer.status}): ${answer.body.slice(0, 200)}`);
      codes.push(code ?? '?');
      for (const secret of secrets) if (answer.body.includes(secret)) problems.push(`${what}: the answer reveals ${secret}`);
      if (CAPABILITY_URL.test(answer.body)) problems.push(`${what}: the answer carries a capability URL: ${answer.body.slice(0, 300)}`);
      const after = await visibility(services);
      try {
        expect(after).toEqual(before);
      } catch {
        problems.push(`${what}: changed who can see what:\n${JSON.stringify({ before, after }).slice(0, 2000)}`);
        break;
      }
    }
    expect(problems).toEqual([]);
    if (op.auth === 'none') {
      // A token is no share code, no password and no API key: nothing opened, no one let in.
      expect(codes.filter((code) => code === '0')).toEqual([]);
    } else {
      // The probe reached what the operation does with a token: it acted at least once (a cover on
      // the share alice's file has) and was refused elsewhere.
      expect(codes).toContain('0');
      expect(codes.some((code) => code !== '0')).toBe(true);
    }
  });
});

describe('ShareImageUpload with only a token', () => {
  const upload = (fid: number) => {
    const op = UNSIGNED.find((candidate) => candidate.name === 'ShareImageUpload')!;
    const texts: ParamTexts = { uid: String(world.alice.uid), token: world.alice.token, fid: String(fid), ImagefileName: 'a.png', byteFileStream: PNG.toString('base64') };
    return sendRaw(world.app.url, callRequest(op, 'get', texts)).then((answer) => element(answer.body, 'string')?.text ?? answer.body);
  };

  it('gives a cover to the share that exists, answering a URL of the image alone', async () => {
    const { db } = world.app.app.services;
    expect(await upload(world.alices.file)).toMatch(/^https?:\/\/[^/]+\/s\/image\/\d+\/[A-Za-z0-9_-]{22}$/);
    const share = await db.selectFrom('shares').select('image_key').where('item_type', '=', 'file').where('item_id', '=', world.alices.file).executeTakeFirstOrThrow();
    expect(share.image_key).not.toBeNull();
  });

  it('refuses (409) a live file of the caller that has no share, and shares nothing', async () => {
    const { db } = world.app.app.services;
    expect(await upload(world.alices.rootFile)).toMatch(/^ERROR 409 /);
    expect(await db.selectFrom('shares').select('id').where('item_type', '=', 'file').where('item_id', '=', world.alices.rootFile).execute()).toEqual([]);
  });
});
