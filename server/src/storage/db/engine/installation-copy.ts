/**
 * The database side of `fss migrate`: copies every table of an embedded SQLite file into PostgreSQL in one target
 * transaction (ids kept, identities moved past them), and checks the copy. Unfinished uploads are not copied: their
 * bytes stay in the source's upload folder. A table's digest sums (mod 2^256) each row's SHA-256 in a canonical
 * form, so it is independent of row order and compares engines whose text orders differ, in constant memory.
 */
import { createHash } from 'node:crypto';
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { continueIdsAfterCopy, lastIssuedId } from './dialect';
import { migrations } from '../migrations';
import type { Database } from '../schema';

export interface CopiedTable {
  readonly name: keyof Database;
  /** The primary key's columns: rows are read in their order. */
  readonly key: readonly string[];
  /** Whether `id` is handed out by the database (continued after the copy). */
  readonly serialId: boolean;
  /** Only these rows are copied (and compared); absent: every row. */
  readonly only?: { readonly where: Expression<SqlBool>; readonly left: string; readonly why: string };
}

/** Every table of the schema, each after the tables its foreign keys point at. */
export const COPIED_TABLES = [
  { name: 'accounts', key: ['id'], serialId: true },
  { name: 'api_keys', key: ['id'], serialId: true },
  { name: 'tokens', key: ['id'], serialId: true },
  { name: 'throttle', key: ['key'], serialId: false },
  { name: 'content', key: ['id'], serialId: true },
  { name: 'encryption_keys', key: ['id'], serialId: true },
  { name: 'folders', key: ['id'], serialId: true },
  { name: 'files', key: ['id'], serialId: true },
  { name: 'shares', key: ['id'], serialId: true },
  { name: 'links', key: ['id'], serialId: true },
  { name: 'emails', key: ['id'], serialId: true },
  { name: 'email_sends', key: ['id'], serialId: true },
  {
    name: 'uploads',
    key: ['id'],
    serialId: false,
    only: {
      where: sql<SqlBool>`completed_at is not null`,
      left: 'unfinished upload(s)',
      why: 'their bytes stay in the upload folder, which does not move; their clients start them again',
    },
  },
  { name: 'content_removals', key: ['storage_key'], serialId: false },
  { name: 'content_encryption', key: ['content_id'], serialId: false },
  { name: 'unlocks', key: ['token_id', 'key_id'], serialId: false },
  { name: 'encryption_jobs', key: ['id'], serialId: true },
] as const satisfies readonly CopiedTable[];

/** Tables that are deliberately not copied, and why. */
export const TABLES_NOT_COPIED = {
  upload_locks: 'locks of requests in flight, which end with the service that holds them',
} as const satisfies Partial<Record<keyof Database, string>>;

// A table added to the schema must be added to one of the two lists: this fails to compile until it is.
type Unlisted = Exclude<keyof Database, (typeof COPIED_TABLES)[number]['name'] | keyof typeof TABLES_NOT_COPIED>;
const everyTableIsListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyTableIsListed;

const tables: readonly CopiedTable[] = COPIED_TABLES;

// ---- Schema --------------------------------------------------------------------------------------

/** Whether `db` has the table (a database that cannot be reached fails here). */
async function hasTable(db: Kysely<any>, name: string): Promise<boolean> {
  const found = await db.introspection.getTables({ withInternalKyselyTables: true });
  return found.some((table) => table.name === name);
}

/** The migrations `db` records as applied (name → when), none when it has no record at all. */
export async function appliedMigrations(db: Kysely<any>): Promise<Map<string, string>> {
  if (!(await hasTable(db, 'kysely_migration'))) return new Map();
  const { rows } = await sql<{ name: string; timestamp: unknown }>`select name, timestamp from kysely_migration`.execute(db);
  return new Map(rows.map((row) => [row.name, row.timestamp instanceof Date ? row.timestamp.toISOString() : String(row.timestamp)]));
}

export interface SchemaState {
  /** Migrations of this version that `db` lacks. */
  readonly missing: readonly string[];
  /** Migrations `db` has that this version does not know (a newer version made them). */
  readonly unknown: readonly string[];
  /** Whether it has no schema at all. */
  readonly empty: boolean;
}

export async function schemaState(db: Kysely<any>): Promise<SchemaState> {
  const applied = await appliedMigrations(db);
  return {
    missing: Object.keys(migrations).filter((name) => !applied.has(name)),
    unknown: [...applied.keys()].filter((name) => !(name in migrations)),
    empty: applied.size === 0,
  };
}

/** Tables whose columns differ between the two databases, for the copied tables; empty when they agree. */
export async function columnDifferences(source: Kysely<any>, target: Kysely<any>): Promise<string[]> {
  const [inSource, inTarget] = await Promise.all([columnsOf(source), columnsOf(target)]);
  const differences: string[] = [];
  for (const table of tables) {
    const a = inSource.get(table.name) ?? [];
    const b = inTarget.get(table.name) ?? [];
    const onlyA = a.filter((column) => !b.includes(column));
    const onlyB = b.filter((column) => !a.includes(column));
    if (onlyA.length + onlyB.length > 0) {
      differences.push(`${table.name}: only in the source ${onlyA.join(', ') || '-'}; only in the target ${onlyB.join(', ') || '-'}`);
    }
  }
  return differences;
}

async function columnsOf(db: Kysely<any>): Promise<Map<string, string[]>> {
  const found = await db.introspection.getTables();
  return new Map(found.map((table) => [table.name, table.columns.map((column) => column.name).sort()]));
}

// ---- Rows ----------------------------------------------------------------------------------------

export interface TableCount {
  readonly table: string;
  readonly rows: number;
  /** Rows that are not (COPIED_TABLES `only`), what they are, and why. */
  readonly left: number;
  readonly leftWhat?: string;
  readonly leftWhy?: string;
}

/** The rows of every copied table (0 for a table the database does not have). */
export async function countTables(db: Kysely<any>): Promise<TableCount[]> {
  const present = new Set((await db.introspection.getTables()).map((table) => table.name));
  const counts: TableCount[] = [];
  for (const table of tables) {
    if (!present.has(table.name)) {
      counts.push({ table: table.name, rows: 0, left: 0 });
      continue;
    }
    const all = await countRows(db, table.name);
    const rows = table.only ? await countRows(db, table.name, table.only.where) : all;
    counts.push({ table: table.name, rows, left: all - rows, ...(table.only ? { leftWhat: table.only.left, leftWhy: table.only.why } : {}) });
  }
  return counts;
}

async function countRows(db: Kysely<any>, table: string, where?: Expression<SqlBool>): Promise<number> {
  let query = db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
  if (where) query = query.where(where);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

function rowsOf(db: Kysely<any>, table: CopiedTable) {
  let query = db.selectFrom(table.name).selectAll();
  if (table.only) query = query.where(table.only.where);
  for (const column of table.key) query = query.orderBy(column);
  return query;
}

export interface TableDigest {
  readonly rows: number;
  /** 64 hex digits (see the file's comment). */
  readonly digest: string;
}

const MODULUS = 1n << 256n;

class Digest {
  rows = 0;
  private sum = 0n;

  add(row: Record<string, unknown>): void {
    this.sum = (this.sum + BigInt(`0x${rowHash(row)}`)) % MODULUS;
    this.rows++;
  }

  result(): TableDigest {
    return { rows: this.rows, digest: this.sum.toString(16).padStart(64, '0') };
  }
}

/** SHA-256 (hex) of a row as both engines read it back. */
function rowHash(row: Record<string, unknown>): string {
  const columns = Object.keys(row).sort();
  return createHash('sha256').update(JSON.stringify(columns.map((column) => [column, canonicalValue(row[column])]))).digest('hex');
}

/** How the rows of a table in `target` compare, by key, with those of `source`. */
export interface RowComparison {
  readonly same: number;
  readonly changed: number;
  /** Source rows the target no longer has. */
  readonly removed: number;
  /** Target rows the source never had. */
  readonly added: number;
}

/** Compares `table` row by row (the source's keys and row hashes are held in memory: some 150 bytes a row). */
export async function compareRows(source: Kysely<any>, target: Kysely<any>, tableName: string): Promise<RowComparison> {
  const table = tables.find((candidate) => candidate.name === tableName)!;
  const keyOf = (row: Record<string, unknown>) => JSON.stringify(table.key.map((column) => canonicalValue(row[column])));
  const inSource = new Map<string, string>();
  for await (const row of rowsOf(source, table).stream(STREAM_CHUNK)) inSource.set(keyOf(row), rowHash(row));
  let same = 0;
  let changed = 0;
  let added = 0;
  for await (const row of rowsOf(target, table).stream(STREAM_CHUNK)) {
    const key = keyOf(row);
    const hash = inSource.get(key);
    if (hash === undefined) added++;
    else if (hash === rowHash(row)) same++;
    else changed++;
    inSource.delete(key);
  }
  return { same, changed, removed: inSource.size, added };
}

/** A value as both engines read it back (U+0000 as U+FFFF, as dialect.postgresTextPlugin stores it). */
function canonicalValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'bigint') return { n: String(value) };
  if (typeof value === 'string') return { s: value.replaceAll('\u0000', '\uffff') };
  if (value instanceof Uint8Array) return { b: Buffer.from(value).toString('hex') };
  return { x: String(value) };
}

/** The digest of every copied table of `db`, read as a stream. */
export async function digestTables(db: Kysely<any>): Promise<Map<string, TableDigest>> {
  const digests = new Map<string, TableDigest>();
  for (const table of tables) {
    const digest = new Digest();
    for await (const row of rowsOf(db, table).stream(STREAM_CHUNK)) digest.add(row);
    digests.set(table.name, digest.result());
  }
  return digests;
}

const STREAM_CHUNK = 1000;
/** Rows per INSERT, at most: PostgreSQL takes up to 65,535 parameters in one statement. */
const MAX_BATCH_ROWS = 1000;
const MAX_BATCH_PARAMETERS = 30_000;

export interface CopyProgress {
  /** Rows of the table copied so far (after each batch). */
  onRows?(table: string, copied: number, rows: number): void;
  onTableDone?(table: string, digest: TableDigest): void;
}

/**
 * Replaces the copied tables of `target` with the rows of `source` (read in one snapshot), recording the copy in
 * the marker row of `sourceId` in the same transaction. Returns each table's digest.
 */
export async function copyTables(
  source: Kysely<Database>,
  target: Kysely<Database>,
  marker: { readonly sourceId: string; readonly at: Date },
  progress: CopyProgress = {},
): Promise<Map<string, TableDigest>> {
  const src = source as Kysely<any>;
  return src.transaction().execute((snapshot) =>
    (target as Kysely<any>).transaction().execute(async (tx) => {
      // Children first, so that no foreign key is in the way.
      for (const table of [...tables].reverse()) await tx.deleteFrom(table.name).execute();
      const digests = new Map<string, TableDigest>();
      for (const table of tables) {
        const rows = await countRows(snapshot, table.name, table.only?.where);
        const digest = new Digest();
        let batch: Record<string, unknown>[] = [];
        let batchLimit = MAX_BATCH_ROWS;
        const flush = async () => {
          if (batch.length === 0) return;
          await tx.insertInto(table.name).values(batch).execute();
          batch = [];
          progress.onRows?.(table.name, digest.rows, rows);
        };
        for await (const row of rowsOf(snapshot, table).stream(STREAM_CHUNK)) {
          const values = row as Record<string, unknown>;
          if (digest.rows === 0) batchLimit = Math.max(1, Math.min(MAX_BATCH_ROWS, Math.floor(MAX_BATCH_PARAMETERS / Object.keys(values).length)));
          digest.add(values);
          batch.push(values);
          if (batch.length >= batchLimit) await flush();
        }
        await flush();
        if (table.serialId) await continueIdsAfterCopy(tx, table.name, await lastIssuedId(snapshot, table.name));
        digests.set(table.name, digest.result());
        progress.onTableDone?.(table.name, digest.result());
      }
      await tx
        .updateTable(MARKER_TABLE)
        .set({ rows_copied_at: marker.at.getTime(), copied: JSON.stringify(Object.fromEntries(digests)) })
        .where('source_id', '=', marker.sourceId)
        .execute();
      return digests;
    }),
  );
}

// ---- The marker ----------------------------------------------------------------------------------

const MARKER_TABLE = 'installation_migrations';

export interface MigrationMarker {
  /** Which installation (operations/admin/migrate-installation.ts sourceIdentity). */
  readonly sourceId: string;
  /** Where it was when last copied from, for messages. */
  readonly sourceDir: string;
  /** A check value of the server secret the copy was made for (never the secret). */
  readonly secretCheck: string;
  readonly runs: number;
  readonly startedAt: Date;
  /** When the rows were last copied (committed with them); null before the first copy committed. */
  readonly rowsCopiedAt: Date | null;
  /** What that copy wrote, per table. */
  readonly copied: ReadonlyMap<string, TableDigest> | null;
  /** When a run last ended with everything verified; null while one is unfinished. */
  readonly finishedAt: Date | null;
}

/** The markers of `db` (their columns: beginRun); none when it has no marker table. */
export async function readMarkers(db: Kysely<any>): Promise<MigrationMarker[]> {
  if (!(await hasTable(db, MARKER_TABLE))) return [];
  const rows = await db.selectFrom(MARKER_TABLE).selectAll().orderBy('started_at').execute();
  return rows.map((row) => ({
    sourceId: row.source_id,
    sourceDir: row.source_dir,
    secretCheck: row.secret_check,
    runs: Number(row.runs),
    startedAt: new Date(Number(row.started_at)),
    rowsCopiedAt: row.rows_copied_at === null ? null : new Date(Number(row.rows_copied_at)),
    copied: row.copied === null ? null : new Map(Object.entries(JSON.parse(row.copied) as Record<string, TableDigest>)),
    finishedAt: row.finished_at === null ? null : new Date(Number(row.finished_at)),
  }));
}

/** Creates the marker table if needed and records the start of a run (the first, or another). */
export async function beginRun(db: Kysely<any>, run: { readonly sourceId: string; readonly sourceDir: string; readonly secretCheck: string; readonly at: Date }): Promise<void> {
  await db.schema
    .createTable(MARKER_TABLE)
    .ifNotExists()
    .addColumn('source_id', 'text', (col) => col.primaryKey())
    .addColumn('source_dir', 'text', (col) => col.notNull())
    .addColumn('secret_check', 'text', (col) => col.notNull())
    .addColumn('runs', 'bigint', (col) => col.notNull())
    .addColumn('started_at', 'bigint', (col) => col.notNull())
    .addColumn('rows_copied_at', 'bigint')
    .addColumn('copied', 'text')
    .addColumn('finished_at', 'bigint')
    .execute();
  await db
    .insertInto(MARKER_TABLE)
    .values({ source_id: run.sourceId, source_dir: run.sourceDir, secret_check: run.secretCheck, runs: 1, started_at: run.at.getTime() })
    .onConflict((oc) =>
      oc.column('source_id').doUpdateSet((eb) => ({
        source_dir: eb.ref('excluded.source_dir'),
        secret_check: eb.ref('excluded.secret_check'),
        started_at: eb.ref('excluded.started_at'),
        runs: eb(`${MARKER_TABLE}.runs`, '+', 1),
        finished_at: null,
      })),
    )
    .execute();
}

/** Records that the run of `sourceId` ended with everything verified. */
export async function finishRun(db: Kysely<any>, sourceId: string, at: Date): Promise<void> {
  await db.updateTable(MARKER_TABLE).set({ finished_at: at.getTime() }).where('source_id', '=', sourceId).execute();
}

// ---- What the checks read ------------------------------------------------------------------------

/** A blob the rows name: a content row's (`sha256` of the plaintext, `size` as stored), or a share's cover image. */
export type NamedBlob =
  | { readonly kind: 'content'; readonly id: number; readonly key: string; readonly size: number; readonly sha256: string; readonly encrypted: boolean }
  | { readonly kind: 'image'; readonly id: number; readonly key: string };

/** Where each kind of blob is named: the table, and the column of its key. */
const BLOB_COLUMNS = { content: ['content', 'storage_key'], image: ['shares', 'image_key'] } as const;

function blobRows(db: Kysely<Database>, kind: NamedBlob['kind']) {
  const [table, key] = BLOB_COLUMNS[kind];
  return (db as Kysely<any>).selectFrom(table).select(['id', `${key} as key`]).where(key, 'is not', null);
}

/** Every blob the rows of `db` name, a page at a time in id order: content rows, then cover images. */
export async function* blobPages(db: Kysely<Database>, pageSize: number): AsyncGenerator<NamedBlob[]> {
  for (const kind of ['content', 'image'] as const) {
    for (let after = 0; ; ) {
      let query = blobRows(db, kind).where('id', '>', after).orderBy('id').limit(pageSize);
      if (kind === 'content') query = query.select(['sha256', 'size', 'encrypted']);
      const rows: Array<Record<string, any>> = await query.execute();
      yield rows.map((row) =>
        kind === 'content'
          ? { kind, id: row.id, key: row.key, size: Number(row.size), sha256: row.sha256, encrypted: row.encrypted === 1 }
          : { kind, id: row.id, key: row.key },
      );
      if (rows.length < pageSize) break;
      after = rows[rows.length - 1].id;
    }
  }
}

/** The keys `db`'s rows name now for the blobs of `page` (one kind), by row id; absent where the row is gone or names none. */
export async function blobKeysNow(db: Kysely<Database>, page: readonly NamedBlob[]): Promise<Map<number, string>> {
  if (page.length === 0) return new Map();
  const rows = await blobRows(db, page[0].kind).where('id', 'in', page.map((blob) => blob.id)).execute();
  return new Map(rows.map((row) => [row.id, row.key]));
}

/** How many blobs the rows name (content rows and cover images), and the content's bytes. */
export async function blobTotals(db: Kysely<Database>): Promise<{ readonly content: number; readonly contentBytes: number; readonly images: number }> {
  const content = await db
    .selectFrom('content')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.coalesce(eb.fn.sum<number>('size'), sql<number>`0`).as('bytes')])
    .executeTakeFirstOrThrow();
  const images = await db
    .selectFrom('shares')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('image_key', 'is not', null)
    .executeTakeFirstOrThrow();
  return { content: Number(content.n), contentBytes: Number(content.bytes), images: Number(images.n) };
}

/** Folders nested deeper than a limit: how many, and the deepest of them. */
export interface DeepFolders {
  readonly count: number;
  readonly deepest: { readonly id: number; readonly account: string; readonly depth: number } | null;
}

/** Folders deeper than `maxDepth` (root children at depth 1), walked down from the roots so a corrupt cycle never loops. */
export async function foldersDeeperThan(db: Kysely<Database>, maxDepth: number): Promise<DeepFolders> {
  const { rows } = await sql<{ id: number; account: string; depth: number; count: number }>`
    with recursive placed(id, account_id, depth) as (
      select id, account_id, 1 from folders where parent_id = 0
      union all
      select f.id, f.account_id, p.depth + 1
      from placed p cross join folders f
      where f.account_id = p.account_id and f.parent_id = p.id
    ),
    deep as (select id, account_id, depth from placed where depth > ${maxDepth})
    select d.id, a.name as account, d.depth, (select count(*) from deep) as count
    from deep d join accounts a on a.id = d.account_id
    order by d.depth desc, d.id
    limit 1`.execute(db);
  const row = rows[0];
  return row ? { count: Number(row.count), deepest: { id: Number(row.id), account: row.account, depth: Number(row.depth) } } : { count: 0, deepest: null };
}

/** Up to `limit` extraction codes sealed under the server secret (shares, queued e-mails). */
export async function sealedExtractionCodes(db: Kysely<Database>, limit: number): Promise<string[]> {
  const shares = await db.selectFrom('shares').select('downpwd_sealed as sealed').where('downpwd_sealed', 'is not', null).limit(limit).execute();
  const emails = await db
    .selectFrom('emails')
    .select('extraction_code_sealed as sealed')
    .where('extraction_code_sealed', 'is not', null)
    .limit(limit)
    .execute();
  return [...shares, ...emails].map((row) => row.sealed!);
}

/** SQLite's `data_version`, read before and after a copy: a change means something (a running service) wrote meanwhile. */
export async function sqliteDataVersion(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ data_version: number }>`pragma data_version`.execute(db);
  return Number(rows[0]?.data_version ?? 0);
}
