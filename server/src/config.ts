/**
 * Every setting of the service, read once from the environment. Tests build a Config directly
 * (see `testConfig` in server/test/helpers) instead of touching process.env.
 */
import path from 'node:path';

export interface Limits {
  /** Largest SOAP/HTTP request body, bytes (operations may allow more: see the catalog). */
  readonly maxBodyBytes: number;
  /** Deepest element nesting accepted in a SOAP request. */
  readonly maxXmlDepth: number;
  /** Most elements accepted in one SOAP request. */
  readonly maxXmlElements: number;
  readonly maxIdsPerList: number;
  readonly maxNameLength: number;
  readonly maxDescriptionLength: number;
  readonly maxKeywordLength: number;
  readonly maxEmailRecipients: number;
  /** Recipients one account may e-mail a share to in any hour, and in any 24 hours (DECISIONS.md §3: 429). */
  readonly maxEmailRecipientsPerHour: number;
  readonly maxEmailRecipientsPerDay: number;
  readonly maxUploadBytes: number;
  readonly defaultQuotaBytes: number;
}

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Folder holding the SQLite file, the content store and the outbox (embedded default). */
  readonly dataDir: string;
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
   * FSS_SMTP_URL: where share e-mails go, `smtp://user:pass@host:587` (STARTTLS when offered) or
   * `smtps://…` (TLS from the start); undefined = write them to `<dataDir>/outbox/` as .eml files.
   * It holds a password: it is never logged.
   */
  readonly smtpUrl: string | undefined;
  /** FSS_MAIL_FROM: the From of share e-mails, `address` or `Name <address>`. */
  readonly mailFrom: string;
  readonly limits: Limits;
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
  maxDescriptionLength: 500,
  maxKeywordLength: 100,
  maxEmailRecipients: 20,
  maxEmailRecipientsPerHour: 100,
  maxEmailRecipientsPerDay: 500,
  maxUploadBytes: 10 * GiB,
  defaultQuotaBytes: 10 * GiB,
};

export class ConfigError extends Error {}

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

function smtpUrlSetting(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.FSS_SMTP_URL;
  if (raw === undefined || raw === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
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

function secretSetting(env: NodeJS.ProcessEnv): Buffer | undefined {
  const raw = env.FSS_SECRET;
  if (raw === undefined || raw === '') return undefined;
  const secret = Buffer.from(raw, 'base64');
  if (secret.length !== 32) throw new ConfigError('FSS_SECRET must be base64 of 32 random bytes (e.g. `openssl rand -base64 32`)');
  return secret;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const dataDir = path.resolve(cwd, env.FSS_DATA_DIR || './data');
  return {
    host: env.HOST || '127.0.0.1',
    port: intSetting(env, 'PORT', 8080, 0, 65535),
    dataDir,
    namespace: env.FSS_NAMESPACE || 'http://tempuri.org/',
    publicUrl: urlSetting(env, 'FSS_PUBLIC_URL'),
    webRoot: path.resolve(cwd, env.FSS_WEB_ROOT || 'dist/web'),
    tokenIdleSeconds: intSetting(env, 'FSS_TOKEN_IDLE_SECONDS', 24 * 3600, 60),
    tokenMaxSeconds: intSetting(env, 'FSS_TOKEN_MAX_SECONDS', 30 * 24 * 3600, 60),
    recycleRetentionDays: intSetting(env, 'FSS_RECYCLE_RETENTION_DAYS', 30, 1),
    secret: secretSetting(env),
    smtpUrl: smtpUrlSetting(env),
    mailFrom: mailFromSetting(env),
    limits: {
      maxBodyBytes: intSetting(env, 'FSS_MAX_BODY_BYTES', defaultLimits.maxBodyBytes, 1024),
      maxXmlDepth: intSetting(env, 'FSS_MAX_XML_DEPTH', defaultLimits.maxXmlDepth, 8, 1000),
      maxXmlElements: intSetting(env, 'FSS_MAX_XML_ELEMENTS', defaultLimits.maxXmlElements, 16),
      maxIdsPerList: intSetting(env, 'FSS_MAX_IDS_PER_LIST', defaultLimits.maxIdsPerList, 1),
      maxNameLength: intSetting(env, 'FSS_MAX_NAME_LENGTH', defaultLimits.maxNameLength, 1, 4096),
      maxDescriptionLength: intSetting(env, 'FSS_MAX_DESCRIPTION_LENGTH', defaultLimits.maxDescriptionLength, 0),
      maxKeywordLength: intSetting(env, 'FSS_MAX_KEYWORD_LENGTH', defaultLimits.maxKeywordLength, 1),
      maxEmailRecipients: intSetting(env, 'FSS_MAX_EMAIL_RECIPIENTS', defaultLimits.maxEmailRecipients, 1),
      maxEmailRecipientsPerHour: intSetting(env, 'FSS_EMAIL_RECIPIENTS_PER_HOUR', defaultLimits.maxEmailRecipientsPerHour, 1),
      maxEmailRecipientsPerDay: intSetting(env, 'FSS_EMAIL_RECIPIENTS_PER_DAY', defaultLimits.maxEmailRecipientsPerDay, 1),
      maxUploadBytes: intSetting(env, 'FSS_MAX_UPLOAD_BYTES', defaultLimits.maxUploadBytes, 1),
      defaultQuotaBytes: intSetting(env, 'FSS_DEFAULT_QUOTA_BYTES', defaultLimits.defaultQuotaBytes, 0),
    },
    log: (line) => process.stdout.write(line + '\n'),
  };
}
