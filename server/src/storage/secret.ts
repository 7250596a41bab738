/**
 * The server secret behind signed URLs and sealed extraction codes, never in the database: FSS_SECRET (the same on
 * every instance), else `<dataDir>/secret.key` (0600), created on the first start.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config';

const SECRET_BYTES = 32;

export async function loadServerSecret(config: Config): Promise<Buffer> {
  if (config.secret) return config.secret;
  const file = path.join(config.dataDir, 'secret.key');
  try {
    return decode((await readFile(file, 'utf8')).trim(), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(SECRET_BYTES);
  try {
    // 'wx': if another process created it meanwhile, read theirs rather than overwrite it.
    await writeFile(file, secret.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return decode((await readFile(file, 'utf8')).trim(), file);
  }
}

/** The secret in `<dataDir>/secret.key`, without creating one (null when the installation used FSS_SECRET): for `fss migrate`. */
export async function readSecretFile(dataDir: string): Promise<Buffer | null> {
  const file = path.join(dataDir, 'secret.key');
  try {
    return decode((await readFile(file, 'utf8')).trim(), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function decode(text: string, source: string): Buffer {
  const secret = Buffer.from(text, 'base64');
  if (secret.length !== SECRET_BYTES) throw new Error(`${source} must hold base64 of ${SECRET_BYTES} bytes`);
  return secret;
}
