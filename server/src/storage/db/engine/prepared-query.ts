/**
 * Queries built and compiled once per database, then run with each call's values at the placeholders' positions:
 * Kysely builds and compiles anew on every execute, which cost as much as running a small query. A placeholder
 * must be bound as a parameter (not sql.lit or an inlined limit); compile() refuses a template where it is not.
 */
import type { Compilable, CompiledQuery, Kysely, RawBuilder } from 'kysely';
import { engineOf } from './dialect';
import { immediateRows } from './sqlite-driver';

/** Stands for the i-th parameter while the query is built. */
class Placeholder {
  constructor(readonly index: number) {}
}

/** A query builder, or an `sql` template (compiled against the database it runs on). */
export type Template<R> = Compilable<R> | RawBuilder<R>;

/** What a template's builder receives: one placeholder per parameter, typed as the value it stands for. */
export type Placeholders<P extends readonly unknown[]> = { readonly [K in keyof P]: P[K] };

interface Compiled<R> {
  readonly query: CompiledQuery<R>;
  /** For each compiled parameter: the index of the call parameter it takes, or -1 for a constant. */
  readonly slots: readonly number[];
  readonly postgres: boolean;
}

/** A query template: `prepared(build)`; `execute(db, ...values)` runs it, compiled on its first run against `db`. */
export interface PreparedQuery<P extends readonly unknown[], R> {
  execute(db: Kysely<any>, ...values: P): Promise<R[]>;
  executeTakeFirst(db: Kysely<any>, ...values: P): Promise<R | undefined>;
}

export function preparedQuery<P extends readonly unknown[], R>(
  arity: P['length'],
  build: (db: Kysely<any>, ...params: Placeholders<P>) => Template<R>,
): PreparedQuery<P, R> {
  // Per Kysely instance (the root database; a transaction is an instance of its own): the compiled
  // SQL depends on the dialect and the plugins.
  const compiledFor = new WeakMap<Kysely<any>, Compiled<R>>();

  const compiledOn = (db: Kysely<any>): Compiled<R> => {
    let compiled = compiledFor.get(db);
    if (!compiled) {
      compiled = compile(db, arity, build);
      compiledFor.set(db, compiled);
    }
    return compiled;
  };

  const execute = async (db: Kysely<any>, ...values: P): Promise<R[]> => {
    const { query, slots, postgres } = compiledOn(db);
    const parameters = slots.map((slot, i) => (slot === -1 ? query.parameters[i] : boundValue(values[slot], postgres)));
    const withValues = { ...query, parameters };
    // On SQLite with the connection free, at once (sqlite-driver.ts immediateRows).
    const rows = postgres ? undefined : immediateRows<R>(db, withValues);
    return rows ?? (await db.executeQuery<R>(withValues)).rows;
  };

  return {
    execute,
    executeTakeFirst: async (db, ...values) => (await execute(db, ...values))[0],
  };
}

function compile<P extends readonly unknown[], R>(
  db: Kysely<any>,
  arity: number,
  build: (db: Kysely<any>, ...params: Placeholders<P>) => Template<R>,
): Compiled<R> {
  const placeholders = Array.from({ length: arity }, (_, i) => new Placeholder(i));
  const built = build(db, ...(placeholders as unknown as Placeholders<P>));
  const query = 'isRawBuilder' in built ? built.compile(db) : built.compile();
  const slots = query.parameters.map((value) => (value instanceof Placeholder ? value.index : -1));
  const missing = placeholders.filter((placeholder) => !slots.includes(placeholder.index));
  if (missing.length > 0) throw new Error(`prepared query: parameter ${missing[0]!.index} is not bound as a parameter: ${query.sql}`);
  return { query, slots, postgres: engineOf(db) === 'postgres' };
}

/** A call's value as compiled: on PostgreSQL U+0000 becomes U+FFFF, as NulInText does at compile time to values it sees. */
function boundValue(value: unknown, postgres: boolean): unknown {
  return postgres && typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '\uffff') : value;
}
