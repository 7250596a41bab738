/**
 * Name conflicts of uploads and moves (docs/web-app.md, "Name conflicts"): which incoming names a folder holds (NamesTaken,
 * 1,000 names a call), and the user's answer to each, asked one at a time by the dialog that NameConflictHost shows.
 */
import { api } from '../../api/client';
import { extensionOf } from '../../api/generated/name-rule';
import type { Item } from '../../api/results';
import { createListeners } from '../../lib/listeners';

export type ConflictChoice = 'replace' | 'keepBoth' | 'skip';

export interface NameConflict {
  /** The incoming item's name, and what it is. */
  readonly name: string;
  readonly kind: Item['type'];
  /** What holds the name in the destination now. */
  readonly existing: Item;
  /** Conflicts left to decide, this one included: "Apply to all" is offered when more than one. */
  readonly remaining: number;
}

/** The answer for one conflict; null: the user cancelled the whole upload or move. */
export type ConflictAnswer = { readonly choice: ConflictChoice; readonly all: boolean } | null;

interface Question {
  readonly id: number;
  readonly conflict: NameConflict;
  readonly answer: (answer: ConflictAnswer) => void;
}

let questions: Question[] = [];
let nextId = 1;
const { subscribe, emit: changed } = createListeners();

/** The question on screen (the first asked); for NameConflictHost. */
export const currentQuestion = (): Question | undefined => questions[0];
export const subscribeToQuestions = subscribe;

/** Asks the user; questions from two batches at once wait their turn. */
export function askNameConflict(conflict: NameConflict): Promise<ConflictAnswer> {
  return new Promise((resolve) => {
    const question: Question = {
      id: nextId++,
      conflict,
      answer: (answer) => {
        questions = questions.filter((candidate) => candidate !== question);
        changed();
        resolve(answer);
      },
    };
    questions = [...questions, question];
    changed();
  });
}

/** The service's name comparison (docs/protocol.md §10.1): NFC, then lower case. */
export const nameKey = (name: string) => name.normalize('NFC').toLowerCase();

const NAMES_PER_CALL = 1000;

/** The items of `dir` holding one of `names`, by name key: NamesTaken, 1,000 names a call ("/" is in no name). */
export async function takenNames(dir: number, names: readonly string[]): Promise<Map<string, Item>> {
  const unique = [...new Set(names)];
  const taken = new Map<string, Item>();
  for (let i = 0; i < unique.length; i += NAMES_PER_CALL) {
    const listing = await api.namesTaken({ dirid: dir, names: unique.slice(i, i + NAMES_PER_CALL).join('/') });
    for (const item of [...listing.folders, ...listing.files]) taken.set(nameKey(item.name), item);
  }
  return taken;
}

/** What to do with an incoming item whose name is taken, and the item holding the name. */
export interface Decision {
  readonly choice: ConflictChoice;
  readonly existing: Item;
}

/** A decision per incoming item (undefined where its name is free), asked in order; null when the user cancelled. */
export async function decideConflicts(
  dir: number,
  incoming: readonly { readonly name: string; readonly kind: Item['type']; readonly id?: number }[],
): Promise<(Decision | undefined)[] | null> {
  const taken = await takenNames(dir, incoming.map((item) => item.name));
  // An item already in the folder does not conflict with itself.
  const holders = incoming.map((item) => {
    const holder = taken.get(nameKey(item.name));
    return holder && !(holder.id === item.id && holder.type === item.kind) ? holder : undefined;
  });
  let remaining = holders.filter(Boolean).length;
  let forAll: ConflictChoice | undefined;
  const decisions: (Decision | undefined)[] = [];
  for (const [index, item] of incoming.entries()) {
    const existing = holders[index];
    if (existing && !forAll) {
      const answer = await askNameConflict({ name: item.name, kind: item.kind, existing, remaining });
      if (!answer) return null;
      if (answer.all) forAll = answer.choice;
      decisions.push({ choice: answer.choice, existing });
    } else decisions.push(existing && forAll ? { choice: forAll, existing } : undefined);
    if (existing) remaining--;
  }
  return decisions;
}

/** "report.pdf" → "report (n).pdf", "Photos" → "Photos (n)": the service's numbering (server/src/operations/tree/names.ts). */
export function numberedName(name: string, isFile: boolean, n: number): string {
  const ext = isFile ? extensionOf(name) : '';
  const dots = isFile && !ext ? /^(.*[^.])(\.+)$/s.exec(name) : null;
  const [stem, end] = ext ? [name.slice(0, -ext.length - 1), name.slice(-ext.length - 1)] : dots ? [dots[1], dots[2]] : [name, ''];
  return `${stem} (${n})${end}`;
}

const CANDIDATES_PER_CALL = 50;

/** The first of "name (1)", "name (2)", … that none of `dirs` holds, asked 50 candidates a call. */
export async function freeNumberedName(dirs: readonly number[], name: string, isFile: boolean): Promise<string> {
  for (let first = 1; ; first += CANDIDATES_PER_CALL) {
    const candidates = Array.from({ length: CANDIDATES_PER_CALL }, (_, i) => numberedName(name, isFile, first + i));
    const taken = new Set<string>();
    for (const dir of new Set(dirs)) for (const key of (await takenNames(dir, candidates)).keys()) taken.add(key);
    const free = candidates.find((candidate) => !taken.has(nameKey(candidate)));
    if (free) return free;
  }
}
