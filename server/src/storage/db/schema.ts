/**
 * The tables as Kysely sees them (snake_case; repositories hand out camelCase objects). bigint columns arrive as
 * numbers (all far below 2^53), times are epoch ms UTC, flags 0/1, `*_key` columns the normalized unique names.
 */
import type { ColumnType, Generated } from 'kysely';

/** A column the database fills in on insert (a default), which later updates may set. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;
/** Epoch milliseconds, UTC. */
type Millis = number;
/** 0 or 1. */
type Flag = Defaulted<0 | 1>;

export interface AccountsTable {
  /** Starts at 1001 (see dialect.startIdsAt), so that account ids never look like small counters. */
  id: Generated<number>;
  /** As the user typed it: letters, digits, `.`, `_`, `-`. */
  name: string;
  /** `name` in lower case: the unique, case-insensitive login name. */
  name_key: string;
  /** `scrypt$N$r$p$salt$hash` (operations/accounts/passwords.ts). */
  password_hash: string;
  quota_bytes: number;
  used_bytes: Defaulted<number>;
  created_at: Millis;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  /** SHA-256 (hex) of the key; the key itself is shown once and never stored. */
  key_hash: string;
  label: string;
  created_at: Millis;
  last_used_at: Millis | null;
}

export interface TokensTable {
  id: Generated<number>;
  account_id: number;
  /** The API key the token was issued for; null for a password login. */
  api_key_id: number | null;
  /** SHA-256 (hex) of the token; the token itself is never stored. */
  token_hash: string;
  /** The signing key, AES-256-GCM-sealed under HKDF-SHA256(token): unreadable without the token. */
  sealed_signing_key: string;
  created_at: Millis;
  /** Updated at most once a minute, so that the hot path stays a read. */
  last_seen_at: Millis;
  /** Sliding: last_seen_at + idle lifetime, never past expires_at. */
  idle_expires_at: Millis;
  /** Absolute: created_at + maximum lifetime. */
  expires_at: Millis;
}

export interface ThrottleTable {
  /** What is counted, e.g. `login:1001@203.0.113.7` or `login-address:203.0.113.7`. */
  key: string;
  failures: number;
  /** First failure of the current run of failures. */
  window_start: Millis;
  /** 0 when not blocked. */
  blocked_until: Defaulted<Millis>;
}

export interface ContentTable {
  id: Generated<number>;
  /** SHA-256 (hex) of the plaintext. */
  sha256: string;
  /** Bytes as stored (ciphertext size for encrypted content). */
  size: number;
  /** Where the bytes are in the content store (a relative path on disk, an object key in S3). */
  storage_key: string;
  encrypted: Flag;
  created_at: Millis;
}

/** Columns that folders and files share: ownership, flags and the recycle bin. */
interface ItemColumns {
  id: Generated<number>;
  account_id: number;
  name: string;
  /** NFC-normalized, lower-cased name: what "unique per folder, case-insensitively" compares. */
  name_key: string;
  /** operations/tree/names.ts naturalSortKey(name): listings order by it (0002_item_order_and_search). */
  sort_key: Defaulted<string>;
  size: Defaulted<number>;
  created_at: Millis;
  updated_at: Millis;
  shared: Flag;
  linked: Flag;
  encrypted: Flag;
  /** Set on an item deleted directly to the bin (the bin lists exactly these); null otherwise. */
  deleted_at: Millis | null;
  /** Set on everything beneath a folder deleted directly: its id, so restore and purge find the subtree by one index. */
  binned_under: number | null;
  /** The original parent path (`/A/B`) of an item deleted directly, shown as `from` in the bin. */
  deleted_from: string | null;
}

export interface FoldersTable extends ItemColumns {
  /** 0 = the account's root. */
  parent_id: number;
  /** With encrypted = 1: the key of the nearest encrypted folder at or above it (0006_encryption). */
  key_id: number | null;
}

export interface FilesTable extends ItemColumns {
  /** 0 = the account's root. */
  folder_id: number;
  /** Lowercase extension without the dot; "" when none. */
  ext: string;
  /** SHA-256 (hex) of the plaintext. */
  sha256: string;
  content_id: number;
  /** The key the file's content is encrypted with; null for plaintext content (0006_encryption). */
  key_id: number | null;  /** 0 while the name is in neither FileSearch index yet (SQLite copies; 0015_deferred_search_index); else 1. */
  search_indexed: Flag;
}

export type ShareItemType = 'folder' | 'file';

export interface SharesTable {
  id: Generated<number>;
  account_id: number;
  item_type: ShareItemType;
  item_id: number;
  /** The public code in /s/{code}: ≥ 128 random bits. */
  code: string;
  /** The extraction code sealed under the server secret (see 0001_initial); null = open share. */
  downpwd_sealed: string | null;
  /** Most downloads allowed; 0 = no limit. */
  download_limit: Defaulted<number>;
  downloads: Defaulted<number>;
  description: Defaulted<string>;
  /** Content-store key of the cover image; null = none. */
  image_key: string | null;
  /** Bytes the cover counts against the owner's quota (0 without one, and for covers older than 0013). */
  image_bytes: Defaulted<number>;
  created_at: Millis;
  updated_at: Millis;
}

export interface LinksTable {
  id: Generated<number>;
  account_id: number;
  file_id: number;
  code: string;
  hits: Defaulted<number>;
  created_at: Millis;
}

export type EmailStatus = 'queued' | 'sent' | 'failed';

export interface EmailsTable {
  id: Generated<number>;
  share_id: number;
  recipient: string;
  status: Defaulted<EmailStatus>;
  attempts: Defaulted<number>;
  next_attempt_at: Millis;
  last_error: string | null;
  created_at: Millis;
  sent_at: Millis | null;
  /** The public base URL of the share link, fixed at queue time (0005_email_queue). */
  base_url: Defaulted<string>;
  /** The language the message is written in, 'en' or 'zh-CN' (0014_email_language). */
  language: Defaulted<string>;
  /** The extraction code at queue time, sealed under the server secret; null for an open share. */
  extraction_code_sealed: string | null;
  /** The sending lease: the instance holding the row (locked_by) until locked_until; null when free. */
  locked_until: Millis | null;
  locked_by: string | null;
}

/** One accepted e-mail share call (0005_email_queue): what the sending rate limit counts. */
export interface EmailSendsTable {
  id: Generated<number>;
  account_id: number;
  recipients: number;
  created_at: Millis;
}

/** A tus upload (0003_uploads): in progress until completed_at is set; claimed by FileAdd (deleted). */
export interface UploadsTable {
  /** The tus upload id (128 random bits, hex). */
  id: string;
  account_id: number;
  /** Upload-Length: the bytes the upload will have. */
  length: number;
  created_at: Millis;
  /** After this the upload (in progress or completed and unclaimed) is purged. */
  expires_at: Millis;
  /** SHA-256 of the bytes, once hashed (before they move into the content store). */
  sha256: string | null;
  /** The content-store key the bytes are being moved to (its write intent is queued). */
  staged_key: string | null;
  /** Set, with content_id, once the bytes are stored: then FileAdd may claim the upload. */
  completed_at: Millis | null;
  content_id: number | null;
  /** An upload encrypted as it arrives (0012_encrypted_uploads): its key, blob id (hex) and chunk size; else all null. */
  key_id: number | null;
  blob_id: string | null;
  chunk_size: number | null;
}

/** Blobs to delete from the content store (0003_uploads): unreferenced content and write intents. */
export interface ContentRemovalsTable {
  storage_key: string;
  created_at: Millis;
  due_at: Millis;
  /** Set when deletion has begun: the key can no longer become live. */
  started_at: Millis | null;
  attempts: Defaulted<number>;
  last_error: string | null;
}

// ---- Encryption (0006_encryption; rules in operations/encryption/encryption.ts) ------------------------

/** One password: its tip, key derivation and the wrapped data key of a file or folder. */
export interface EncryptionKeysTable {
  id: Generated<number>;
  account_id: number;
  item_type: 'folder' | 'file';
  item_id: number;
  tip: Defaulted<string>;
  kdf: 'scrypt';
  kdf_n: number;
  kdf_r: number;
  kdf_p: number;
  /** base64url. */
  kdf_salt: string;
  /** The data key, AES-256-GCM under the password's derived key: `v1.nonce.ciphertext.tag`. */
  wrapped_key: string;
  created_at: Millis;
}

/** How the bytes of an encrypted content row are laid out (operations/crypto/content-cipher.ts). */
export interface ContentEncryptionTable {
  content_id: number;
  key_id: number;
  chunk_size: number;
  nonce_scheme: 'random96';
  /** 128 random bits, hex: in the blob's header and every chunk's associated data. */
  blob_id: string;
  plaintext_size: number;
}

/** A data key unlocked for one session, sealed under a key derived from its token. */
export interface UnlocksTable {
  token_id: number;
  key_id: number;
  sealed_key: string;
  created_at: Millis;
  expires_at: Millis;
}

export type EncryptionJobKind = 'encrypt' | 'decrypt';

/** Background encryption or decryption of many files, leased to one instance at a time. */
export interface EncryptionJobsTable {
  id: Generated<number>;
  account_id: number;
  kind: EncryptionJobKind;
  key_id: number;
  folder_id: number;
  /** The data key sealed under the server secret; null once the job has ended. */
  sealed_key: string | null;
  total_files: Defaulted<number>;
  total_bytes: Defaulted<number>;
  done_files: Defaulted<number>;
  done_bytes: Defaulted<number>;
  failed_files: Defaulted<number>;
  created_at: Millis;
  started_at: Millis | null;
  finished_at: Millis | null;
  lease_owner: string | null;
  lease_until: Defaulted<Millis>;
  last_error: string | null;
}

/** A lock on an upload held by one request of one instance (0007_upload_locks). */
export interface UploadLocksTable {
  /** The upload id, or `<id>/completion`. */
  name: string;
  /** One acquisition: random. */
  holder: string;
  /** The process holding it: `host:pid:random`. */
  instance: string;
  acquired_at: Millis;
  /** The lease: renewed while held; past it, another request may take the lock over. */
  expires_at: Millis;
  /** 1 once another request has asked the holder to let go. */
  release_requested: Flag;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  tokens: TokensTable;
  throttle: ThrottleTable;
  content: ContentTable;
  folders: FoldersTable;
  files: FilesTable;
  shares: SharesTable;
  links: LinksTable;
  emails: EmailsTable;
  email_sends: EmailSendsTable;
  uploads: UploadsTable;
  content_removals: ContentRemovalsTable;
  encryption_keys: EncryptionKeysTable;
  content_encryption: ContentEncryptionTable;
  unlocks: UnlocksTable;
  encryption_jobs: EncryptionJobsTable;
  upload_locks: UploadLocksTable;
}
