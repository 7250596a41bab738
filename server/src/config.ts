/** Every setting, read once from the environment; tests build a Config directly (`testConfig`, server/test/helpers). */
import { isIP } from 'node:net';
import path from 'node:path';
import { stdoutLines } from './log';

export interface Limits {
  /** Largest SOAP/HTTP request body, bytes (operations may allow more: see the catalog). */
  readonly maxBodyBytes: number;
  /** Deepest element nesting accepted in a SOAP request. */
  readonly maxXmlDepth: number;
  /** Most elements accepted in one SOAP request. */
  readonly maxXmlElements: number;
  readonly maxIdsPerList: number;
  readonly maxNameLength: number;
  /** Deepest folder nesting (root children at 1): FolderAdd, Move and restores never exceed it, so walks up stay short. */
  readonly maxFolderDepth: number;
  /** Copy: folders and files one call may create (413 beyond). */
  readonly maxCopyItems: number;
  readonly maxDescriptionLength: number;
  readonly maxKeywordLength: number;
  readonly maxEmailRecipients: number;
  /** Recipients one account may e-mail a share to in any hour, and in any 24 hours (DECISIONS.md §3: 429). */
  readonly maxEmailRecipientsPerHour: number;
  readonly maxEmailRecipientsPerDay: number;
  /** Successful Logins per client address in 15 minutes before a block (docs/protocol.md §5.5): each costs a password hash. */
  readonly loginsPerAddress: number;
  readonly maxUploadBytes: number;
  readonly defaultQuotaBytes: number;
  /** Shares of one account that may have a cover image at once (ShareImageUpload: 413 beyond). */
  readonly maxCoverImagesPerAccount: number;
  /** Folders and files one ZIP download may hold (ZipDownload: 413 beyond): its directory is kept in memory. */
  readonly maxZipEntries: number;
}

/** Where content lives when it is in an S3-compatible object store (storage/content/s3-store.ts). */
export interface S3Settings {
  /** FSS_S3_ENDPOINT: `https://host[:port]` of MinIO, Ceph, R2…; undefined = AWS S3 of the region. */
  readonly endpoint: string | undefined;
  readonly bucket: string;
  readonly region: string;
  /** Both or neither; neither = the AWS SDK's default credential chain (AWS_* variables, instance role). */
  readonly accessKeyId: string | undefined;
  readonly secretAccessKey: string | undefined;
  /** Path-style URLs (`endpoint/bucket/key`) rather than virtual-hosted ones (`bucket.endpoint/key`). */
  readonly forcePathStyle: boolean;
  /** Prepended to every object key: '' or a folder-like prefix ending in '/'. */
  readonly prefix: string;
}

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Folder holding the SQLite file, the content store and the outbox (embedded default). */
  readonly dataDir: string;
  /** FSS_DATABASE_URL (`postgres://…`; may hold a password, never logged); undefined = `<dataDir>/fss.sqlite`. */
  readonly databaseUrl: string | undefined;
  /** FSS_DATABASE_POOL_SIZE: most connections one instance opens to PostgreSQL. */
  readonly databasePoolSize: number;
  /** FSS_CONNECT_TIMEOUT_SECONDS: how long opening a connection to PostgreSQL or the S3 store may take. */
  readonly connectTimeoutMs: number;
  /** FSS_DB_TIMEOUT_SECONDS: longest PostgreSQL statement (and wait for its answer); 0 = none. */
  readonly databaseTimeoutMs: number;
  /** FSS_STORE_TIMEOUT_SECONDS: longest wait for the S3 store's answer, and for the next bytes of a body; 0 = none. */
  readonly storeTimeoutMs: number;
  /** FSS_CACHE_MB (formerly FSS_LISTING_CACHE_MB): MiB the call path's caches may hold (operations/caches.ts); 0 turns them off. */
  readonly cacheMb: number;
  /** XML namespace of the services; also the prefix of every SOAPAction. */
  readonly namespace: string;
  /** Base URL used in links and download URLs; undefined = the request's own host. */
  readonly publicUrl: string | undefined;
  /** Directory of the built web app (vite build); served at / when present. */
  readonly webRoot: string;
  readonly tokenIdleSeconds: number;
  readonly tokenMaxSeconds: number;
  readonly recycleRetentionDays: number;
  /** FSS_SECRET: base64 of 32 bytes, shared by every instance; undefined = `<dataDir>/secret.key`. */
  readonly secret: Buffer | undefined;
  /**
   * FSS_SMTP_URL: `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://…`; undefined = .eml files in
   * `<dataDir>/outbox/`. It holds a password: never logged.
   */
  readonly smtpUrl: string | undefined;
  /** FSS_MAIL_FROM: the From of share e-mails, `address` or `Name <address>`. */
  readonly mailFrom: string;
  /** FSS_S3_*: the bucket for content and unfinished uploads (FSS_S3_BUCKET switches to it); undefined = the local disk. */
  readonly s3: S3Settings | undefined;
  /** FSS_TRUSTED_PROXIES: addresses and CIDR ranges whose X-Forwarded-For is believed (protocol/client-address.ts). */
  readonly trustedProxies: readonly string[];
  /** FSS_JOB_LEASE_SECONDS: how soon another instance takes over a dead instance's encryption job (for tests; 60 suits production). */
  readonly jobLeaseMs: number;
  /** FSS_SHUTDOWN_SECONDS: how long requests in flight may go on after SIGTERM/SIGINT before they are cut (server.ts). */
  readonly shutdownMs: number;
  /** FSS_PASSWORD_HASH_SLOTS: scrypt hashes at once (operations/crypto/hash-queue.ts), at most the pool less two, kept for file I/O. */
  readonly passwordHashSlots: number;
  /**
   * FSS_IMAGE_MAKERS, FSS_IMAGE_QUEUE: thumbnails and renditions made at once in this process (each
   * holds one thread of the pool), and how many more may wait before the route answers 503.
   */
  readonly imageMakers: number;
  readonly imageQueue: number;
  /** FSS_IMAGES_AHEAD: uploaded images whose thumbnails may wait to be made ahead of their first look (0: only on first look). */
  readonly imagesAhead: number;
  readonly limits: Limits;
  /** FSS_METRICS: no /metrics (off), /metrics on the public port (on), or a listener of its own (host:port). */
  readonly metrics: MetricsSetting;
  /** Where log lines go; tests capture them. */
  readonly log: (line: string) => void;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

export const defaultLimits: Limits = {
  maxBodyBytes: 1 * MiB,
  maxXmlDepth: 32,
  maxXmlElements: 10_000,
  maxIdsPerList: 1_000,
  maxNameLength: 255,
  maxFolderDepth: 256,
  maxCopyItems: 10_000,
  maxDescriptionLength: 500,
  maxKeywordLength: 100,
  maxEmailRecipients: 20,
  maxEmailRecipientsPerHour: 100,
  maxEmailRecipientsPerDay: 500,
  loginsPerAddress: 100,
  maxUploadBytes: 10 * GiB,
  defaultQuotaBytes: 10 * GiB,
  maxCoverImagesPerAccount: 1_000,
  maxZipEntries: 100_000,
};

export type MetricsSetting = { readonly kind: 'off' | 'on' } | { readonly kind: 'listener'; readonly host: string; readonly port: number };

export class ConfigError extends Error {}

/** FSS_METRICS: off (default), on, or `host:port` (`[::1]:9464` for IPv6). */
function metricsSetting(env: NodeJS.ProcessEnv): MetricsSetting {
  const raw = (env.FSS_METRICS ?? '').trim();
  if (raw === '' || raw === 'off') return { kind: 'off' };
  if (raw === 'on') return { kind: 'on' };
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(raw);
  const port = Number(match?.[3]);
  if (!match || port > 65535) throw new ConfigError(`FSS_METRICS must be off, on or host:port (e.g. 127.0.0.1:9464), got "${raw}"`);
  return { kind: 'listener', host: match[1] ?? match[2], port };
}

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${raw}`);
  return value;
}

function urlSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be http or https`);
  return url.href.replace(/\/+$/, '');
}

/** `raw` as a URL; undefined when it is not one (the caller's message must not repeat a secret). */
function parsedUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

function smtpUrlSetting(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.FSS_SMTP_URL;
  if (raw === undefined || raw === '') return undefined;
  const url = parsedUrl(raw);
  // The message never repeats the value: it may hold a password.
  if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '') {
    throw new ConfigError('FSS_SMTP_URL must be smtp://[user:pass@]host[:port] or smtps://[user:pass@]host[:port]');
  }
  return raw;
}

function mailFromSetting(env: NodeJS.ProcessEnv): string {
  const raw = env.FSS_MAIL_FROM;
  if (raw === undefined || raw === '') return 'File Storage <no-reply@localhost>';
  // A header value: a line break would let it add headers of its own.
  if (/[\x00-\x1f\x7f]/.test(raw) || !/@/.test(raw)) throw new ConfigError(`FSS_MAIL_FROM must be an address or "Name <address>", on one line`);
  return raw;
}

function databaseUrlSetting(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.FSS_DATABASE_URL;
  if (raw === undefined || raw === '') return undefined;
  const url = parsedUrl(raw);
  // The message never repeats the value: it may hold a password.
  if (!url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')) {
    throw new ConfigError('FSS_DATABASE_URL must be postgres://[user:pass@]host[:port]/database');
  }
  return raw;
}

function s3Settings(env: NodeJS.ProcessEnv): S3Settings | undefined {
  const bucket = env.FSS_S3_BUCKET ?? '';
  const others = ['FSS_S3_ENDPOINT', 'FSS_S3_REGION', 'FSS_S3_ACCESS_KEY_ID', 'FSS_S3_SECRET_ACCESS_KEY', 'FSS_S3_FORCE_PATH_STYLE', 'FSS_S3_PREFIX'];
  if (bucket === '') {
    const stray = others.find((name) => (env[name] ?? '') !== '');
    if (stray) throw new ConfigError(`${stray} is set but FSS_S3_BUCKET is not: set the bucket to keep content in S3`);
    return undefined;
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{1,254}$/.test(bucket)) throw new ConfigError(`FSS_S3_BUCKET must be a bucket name, got "${bucket}"`);
  const endpoint = urlSetting(env, 'FSS_S3_ENDPOINT');
  const region = env.FSS_S3_REGION || 'us-east-1';
  if (!/^[a-z0-9-]{1,64}$/.test(region)) throw new ConfigError(`FSS_S3_REGION must be a region name such as eu-west-1, got "${region}"`);
  const accessKeyId = env.FSS_S3_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.FSS_S3_SECRET_ACCESS_KEY || undefined;
  // The message never repeats the values: one is a secret.
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError('FSS_S3_ACCESS_KEY_ID and FSS_S3_SECRET_ACCESS_KEY go together: set both, or neither for the default AWS credentials');
  }
  const pathStyle = env.FSS_S3_FORCE_PATH_STYLE ?? '';
  if (!['', 'true', 'false', '1', '0'].includes(pathStyle)) throw new ConfigError(`FSS_S3_FORCE_PATH_STYLE must be true or false, got "${pathStyle}"`);
  // Other stores (MinIO, Ceph) are usually addressed by path; AWS by virtual host.
  const forcePathStyle = pathStyle === '' ? endpoint !== undefined : pathStyle === 'true' || pathStyle === '1';
  const rawPrefix = env.FSS_S3_PREFIX ?? '';
  if (rawPrefix !== '' && (!/^[A-Za-z0-9!_.*'()/-]{1,200}$/.test(rawPrefix) || rawPrefix.startsWith('/') || rawPrefix.includes('//') || /(^|\/)\.{1,2}(\/|$)/.test(rawPrefix))) {
    throw new ConfigError(`FSS_S3_PREFIX must be a key prefix such as fss/ (letters, digits, and !_.*'()/-), got "${rawPrefix}"`);
  }
  const prefix = rawPrefix === '' || rawPrefix.endsWith('/') ? rawPrefix : `${rawPrefix}/`;
  return { endpoint, bucket, region, accessKeyId, secretAccessKey, forcePathStyle, prefix };
}

/** FSS_TRUSTED_PROXIES: comma-separated IPv4/IPv6 addresses and CIDR ranges, each checked. */
function trustedProxiesSetting(env: NodeJS.ProcessEnv): string[] {
  const entries = (env.FSS_TRUSTED_PROXIES ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    if (family === 0 || rest.length > 0 || (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits))) {
      throw new ConfigError(`FSS_TRUSTED_PROXIES must be a comma-separated list of IP addresses and CIDR ranges (e.g. 10.0.0.0/8, ::1), got "${entry}"`);
    }
  }
  return entries;
}

function secretSetting(env: NodeJS.ProcessEnv): Buffer | undefined {
  const raw = env.FSS_SECRET;
  if (raw === undefined || raw === '') return undefined;
  const secret = Buffer.from(raw, 'base64');
  if (secret.length !== 32) throw new ConfigError('FSS_SECRET must be base64 of 32 random bytes (e.g. `openssl rand -base64 32`)');
  return secret;
}

/** The threads of libuv's pool (scrypt and file I/O alike): UV_THREADPOOL_SIZE as libuv reads it (≤ 1024), else 4. */
export function threadPoolSize(env: NodeJS.ProcessEnv): number {
  const size = Number(env.UV_THREADPOOL_SIZE);
  return Number.isSafeInteger(size) && size > 0 ? Math.min(size, 1024) : 4;
}

/** Threads of the pool kept for file I/O whatever the logins: FSS_PASSWORD_HASH_SLOTS may take the rest. */
export const THREADS_KEPT_FOR_FILES = 2;

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const dataDir = path.resolve(cwd, env.FSS_DATA_DIR || './data');
  return {
    host: env.HOST || '127.0.0.1',
    port: intSetting(env, 'PORT', 8080, 0, 65535),
    dataDir,
    databaseUrl: databaseUrlSetting(env),
    databasePoolSize: intSetting(env, 'FSS_DATABASE_POOL_SIZE', 10, 1, 1000),
    connectTimeoutMs: intSetting(env, 'FSS_CONNECT_TIMEOUT_SECONDS', 5, 1, 600) * 1000,
    databaseTimeoutMs: intSetting(env, 'FSS_DB_TIMEOUT_SECONDS', 30, 0, 3600) * 1000,
    storeTimeoutMs: intSetting(env, 'FSS_STORE_TIMEOUT_SECONDS', 10, 0, 3600) * 1000,
    cacheMb: intSetting(env, env.FSS_CACHE_MB === undefined ? 'FSS_LISTING_CACHE_MB' : 'FSS_CACHE_MB', 32, 0, 65_536),
    namespace: env.FSS_NAMESPACE || 'http://tempuri.org/',
    publicUrl: urlSetting(env, 'FSS_PUBLIC_URL'),
    webRoot: path.resolve(cwd, env.FSS_WEB_ROOT || 'dist/web'),
    tokenIdleSeconds: intSetting(env, 'FSS_TOKEN_IDLE_SECONDS', 24 * 3600, 60),
    tokenMaxSeconds: intSetting(env, 'FSS_TOKEN_MAX_SECONDS', 30 * 24 * 3600, 60),
    recycleRetentionDays: intSetting(env, 'FSS_RECYCLE_RETENTION_DAYS', 30, 1),
    secret: secretSetting(env),
    smtpUrl: smtpUrlSetting(env),
    mailFrom: mailFromSetting(env),
    s3: s3Settings(env),
    trustedProxies: trustedProxiesSetting(env),
    jobLeaseMs: intSetting(env, 'FSS_JOB_LEASE_SECONDS', 60, 1, 3600) * 1000,
    shutdownMs: intSetting(env, 'FSS_SHUTDOWN_SECONDS', 30, 0, 3600) * 1000,
    passwordHashSlots: intSetting(env, 'FSS_PASSWORD_HASH_SLOTS', 2, 1, Math.max(1, threadPoolSize(env) - THREADS_KEPT_FOR_FILES)),
    imageMakers: intSetting(env, 'FSS_IMAGE_MAKERS', 1, 1, 64),
    imageQueue: intSetting(env, 'FSS_IMAGE_QUEUE', 16, 0, 10_000),
    imagesAhead: intSetting(env, 'FSS_IMAGES_AHEAD', 10_000, 0, 1_000_000),
    metrics: metricsSetting(env),
    limits: {
      maxBodyBytes: intSetting(env, 'FSS_MAX_BODY_BYTES', defaultLimits.maxBodyBytes, 1024),
      maxXmlDepth: intSetting(env, 'FSS_MAX_XML_DEPTH', defaultLimits.maxXmlDepth, 8, 1000),
      maxXmlElements: intSetting(env, 'FSS_MAX_XML_ELEMENTS', defaultLimits.maxXmlElements, 16),
      maxIdsPerList: intSetting(env, 'FSS_MAX_IDS_PER_LIST', defaultLimits.maxIdsPerList, 1),
      maxNameLength: intSetting(env, 'FSS_MAX_NAME_LENGTH', defaultLimits.maxNameLength, 1, 4096),
      maxFolderDepth: intSetting(env, 'FSS_MAX_FOLDER_DEPTH', defaultLimits.maxFolderDepth, 1, 4096),
      maxCopyItems: intSetting(env, 'FSS_MAX_COPY_ITEMS', defaultLimits.maxCopyItems, 1),
      maxDescriptionLength: intSetting(env, 'FSS_MAX_DESCRIPTION_LENGTH', defaultLimits.maxDescriptionLength, 0),
      maxKeywordLength: intSetting(env, 'FSS_MAX_KEYWORD_LENGTH', defaultLimits.maxKeywordLength, 1),
      maxEmailRecipients: intSetting(env, 'FSS_MAX_EMAIL_RECIPIENTS', defaultLimits.maxEmailRecipients, 1),
      maxEmailRecipientsPerHour: intSetting(env, 'FSS_EMAIL_RECIPIENTS_PER_HOUR', defaultLimits.maxEmailRecipientsPerHour, 1),
      maxEmailRecipientsPerDay: intSetting(env, 'FSS_EMAIL_RECIPIENTS_PER_DAY', defaultLimits.maxEmailRecipientsPerDay, 1),
      loginsPerAddress: intSetting(env, 'FSS_LOGINS_PER_ADDRESS', defaultLimits.loginsPerAddress, 1),
      maxUploadBytes: intSetting(env, 'FSS_MAX_UPLOAD_BYTES', defaultLimits.maxUploadBytes, 1),
      defaultQuotaBytes: intSetting(env, 'FSS_DEFAULT_QUOTA_BYTES', defaultLimits.defaultQuotaBytes, 0),
      maxCoverImagesPerAccount: intSetting(env, 'FSS_MAX_COVER_IMAGES', defaultLimits.maxCoverImagesPerAccount, 0),
      maxZipEntries: intSetting(env, 'FSS_MAX_ZIP_ENTRIES', defaultLimits.maxZipEntries, 1, 1_000_000),
    },
    log: stdoutLines,
  };
}
