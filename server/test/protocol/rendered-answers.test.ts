/**
 * Kept rendered answers (protocol/asmx/rendered-answers.ts) hold only their own bytes: the weight the caches count
 * for them is the memory they keep, so the caches' budget (FSS_CACHE_MB) bounds it.
 */
import { expect, it, onTestFinished } from 'vitest';
import { findOperation } from '../../src/catalog/operations';
import { addAccount, callSigned, logIn, startTestApp } from '../helpers/app-server';
import { FORMS } from '../helpers/requests';

const GetFiles = findOperation('UserService', 'GetFiles')!;

it.each(FORMS)('%s: a kept GetFiles answer of a small folder is a buffer of its own, not a slice of a shared pool', async (form) => {
  const app = await startTestApp();
  onTestFinished(() => app.close());
  const uid = await addAccount(app, 'alice', 'alice-password-1');
  const session = await logIn(app, form, 'alice', 'alice-password-1');
  const answer = await callSigned(app, form, GetFiles, session, { dir: '0', order: 'name', desc: '0' });
  expect(answer.status).toBe(200);

  const kept = app.app.services.caches.listings.peek(`${uid}/0/name/0`);
  const bodies = [...(kept?.value.rendered.values() ?? [])];
  expect(bodies).toHaveLength(1);
  expect(bodies[0].length).toBeLessThan(4096); // small enough for Buffer.from's shared 8 KiB pool
  expect(bodies[0].buffer.byteLength).toBe(bodies[0].length);
});
