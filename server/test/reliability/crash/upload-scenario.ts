/**
 * Kills during uploads: the client creates a tus upload of a small file (1–96 KiB), sends its body
 * in one PATCH in 4 KiB pieces 1–4 ms apart (so the kill often lands mid-body), and records it with
 * FileAdd. After the restart the ledger check runs, and the client finishes the upload it was
 * sending, as a tus client does: HEAD for the offset reached, PATCH the rest, FileAdd. The stored
 * file must have exactly the bytes generated.
 *
 * An upload whose PATCH the kill cut off stays locked by the dead process until the lock's lease
 * runs out (15 s, operations/content/upload-locks.ts): the client resumes it 16 s after the kill, in a later
 * round, and meanwhile uploads other files; the last ones are resumed at the end.
 */
import { CallFailed, bytesOf, createUpload, download, patchSlowly, sha256, uploadOffset } from './client';
import type { Scenario, ScenarioContext } from './harness';
import { keyOf } from './ledger';
import { TreeClient } from './tree-client';

interface PendingUpload {
  readonly bytes: Buffer;
  readonly name: string;
  readonly parent: number;
  location: string | null;
  /** Set once the upload answered its SHA-256 (all bytes stored). */
  completed: boolean;
}

interface UploadState {
  readonly client: TreeClient;
  pending: PendingUpload | null;
  /** Uploads cut off mid-body, waiting for the dead process's lock to expire. */
  readonly stalled: Array<{ readonly upload: PendingUpload; readonly since: number }>;
  readonly stats: { resumedMidBody: number; completedByHead: number; createdNot: number; fileAddRedone: number; bytesResumed: number };
}

const states = new WeakMap<ScenarioContext, UploadState>();

/** DEFAULT_UPLOAD_LOCK_TIMINGS.leaseMs, and a second more. */
const UPLOAD_LOCK_LEASE_MS = 16_000;

/** As a tus client resumes: HEAD for the offset reached, PATCH the rest; then FileAdd. */
async function resume(ctx: ScenarioContext, state: UploadState, pending: PendingUpload): Promise<void> {
  const head = await uploadOffset(ctx.server.url, ctx.session, pending.location!);
  if (head.status !== 200 || head.offset < 0 || head.offset > pending.bytes.length) throw new Error(`resume HEAD answered ${JSON.stringify(head)}`);
  if (head.offset === pending.bytes.length) {
    // Every byte had arrived: the upload is complete (or the HEAD completed it) and answers its hash.
    if (head.sha256 !== sha256(pending.bytes)) throw new Error(`the completed upload answers SHA-256 ${head.sha256}, the bytes have ${sha256(pending.bytes)}`);
    state.stats.completedByHead++;
  } else {
    const hash = await patchSlowly(ctx.server.url, ctx.session, pending.location!, pending.bytes, head.offset, 64 * 1024, 0);
    if (hash !== sha256(pending.bytes)) throw new Error(`the resumed upload answered SHA-256 ${hash}, the bytes have ${sha256(pending.bytes)}`);
    state.stats.resumedMidBody++;
    state.stats.bytesResumed += pending.bytes.length - head.offset;
  }
  pending.completed = true;
  await finishUpload(ctx, state, pending);
}

/** FileAdd of a completed upload, and its download to the byte. */
async function finishUpload(ctx: ScenarioContext, state: UploadState, pending: PendingUpload): Promise<void> {
  try {
    await uploadAndAdd(ctx, state, pending);
  } catch (error) {
    if (error instanceof CallFailed) throw new Error(`finishing an upload after the restart got no answer: ${error.message}`);
    throw error;
  }
  const file = [...state.client.ledger.committed.values()].find((item) => item.type === 'file' && item.name === pending.name)!;
  const got = await download(ctx.server.url, ctx.session, file.id);
  if (got.sha256 !== sha256(pending.bytes) || got.size !== pending.bytes.length) throw new Error(`${keyOf('file', file.id)} downloads as ${JSON.stringify(got)}`);
}

async function uploadAndAdd(ctx: ScenarioContext, state: UploadState, pending: PendingUpload): Promise<void> {
  const url = ctx.server.url;
  if (pending.location === null) pending.location = await createUpload(url, ctx.session, pending.bytes.length);
  if (!pending.completed) {
    const hash = await patchSlowly(url, ctx.session, pending.location, pending.bytes, 0, 4096, ctx.random.int(1, 4));
    if (hash !== sha256(pending.bytes)) throw new Error(`the upload answered SHA-256 ${hash}, the bytes have ${sha256(pending.bytes)}`);
    pending.completed = true;
  }
  await state.client.addFile(pending.parent, pending.name, { sha256: sha256(pending.bytes), size: pending.bytes.length });
}

export const uploadsScenario: Scenario = {
  name: 'uploads',
  minDelayMs: 5,
  maxDelayMs: 400,
  async prepare(ctx) {
    const client = new TreeClient(ctx);
    states.set(ctx, { client, pending: null, stalled: [], stats: { resumedMidBody: 0, completedByHead: 0, createdNot: 0, fileAddRedone: 0, bytesResumed: 0 } });
    for (let i = 0; i < 2; i++) await client.addFolder(0, client.newName('folder'));
  },
  async work(ctx) {
    const state = states.get(ctx)!;
    for (;;) {
      const size = ctx.random.int(1, 96) * 1024 - ctx.random.int(0, 1023);
      const name = state.client.newName('upload', 'bin');
      state.pending = { bytes: bytesOf(`${ctx.name} ${name}`, size), name, parent: ctx.random.pick(state.client.liveFolders()), location: null, completed: false };
      await uploadAndAdd(ctx, state, state.pending);
      state.pending = null;
    }
  },
  async verify(ctx) {
    const state = states.get(ctx)!;
    await state.client.verify();
    const pending = state.pending;
    state.pending = null;
    if (pending) {
      const added = [...state.client.ledger.committed.values()].find((item) => item.type === 'file' && item.name === pending.name);
      if (added) {
        // FileAdd was under way and happened: the file is the bytes generated.
        const got = await download(ctx.server.url, ctx.session, added.id);
        if (got.sha256 !== sha256(pending.bytes)) throw new Error(`file ${added.id} downloads as ${got.sha256}, not ${sha256(pending.bytes)}`);
      } else if (pending.location === null) {
        // The creation got no answer: whether the upload exists or not, the client cannot know its
        // id; it starts again (an upload it never learnt of expires).
        state.stats.createdNot++;
      } else if (pending.completed) {
        state.stats.fileAddRedone++;
        await finishUpload(ctx, state, pending);
      } else {
        state.stalled.push({ upload: pending, since: performance.now() });
      }
    }
    // A PATCH that the kill cut off left its upload locked by the dead process until the lock's
    // lease runs out (operations/content/upload-locks.ts: 15 s); the client resumes once it has.
    const due = state.stalled.filter((s) => performance.now() - s.since > UPLOAD_LOCK_LEASE_MS);
    for (const stalled of due) {
      state.stalled.splice(state.stalled.indexOf(stalled), 1);
      await resume(ctx, state, stalled.upload);
    }
  },
  async finish(ctx) {
    const state = states.get(ctx)!;
    const { stats } = state;
    for (const stalled of state.stalled.splice(0)) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, UPLOAD_LOCK_LEASE_MS - (performance.now() - stalled.since))));
      await resume(ctx, state, stalled.upload);
    }
    ctx.log(
      `uploads cut mid-body and resumed: ${stats.resumedMidBody} (${(stats.bytesResumed / 1024).toFixed(0)} KiB sent again), completed by the resume HEAD: ${stats.completedByHead}, ` +
        `creation unanswered: ${stats.createdNot}, FileAdd unanswered and sent again: ${stats.fileAddRedone}`,
    );
  },
};
