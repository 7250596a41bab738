/**
 * Keys (operations/crypto): scrypt key derivation with per-item parameters, data-key wrapping, and
 * sealing bound to a purpose and a context.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DATA_KEY_BYTES, newDataKey, unwrapDataKey, wrapDataKey } from '../../src/operations/crypto/data-key';
import { HashQueue } from '../../src/operations/crypto/hash-queue';
import { DEFAULT_KDF_COST, deriveKeyEncryptionKey, newKdfParams, validKdfParams, type KdfParams } from '../../src/operations/crypto/key-derivation';
import { seal, unseal } from '../../src/operations/crypto/sealing';

const cheap = { N: 1024, r: 8, p: 1 };
const queue = new HashQueue(2, 8);

describe('key derivation (scrypt)', () => {
  it('defaults to N=2^15, r=8, p=3 with a 16-byte random salt per item', () => {
    const a = newKdfParams();
    const b = newKdfParams();
    expect(a).toMatchObject({ algorithm: 'scrypt', ...DEFAULT_KDF_COST });
    expect(a.salt.length).toBe(16);
    expect(a.salt.equals(b.salt)).toBe(false);
  });

  it('derives the same key for the same password and parameters, another for another salt or cost', async () => {
    const params = newKdfParams(cheap);
    const key = await deriveKeyEncryptionKey(queue, 'open sesame', params);
    expect(key.length).toBe(32);
    expect(await deriveKeyEncryptionKey(queue, 'open sesame', params)).toEqual(key);
    expect(await deriveKeyEncryptionKey(queue, 'open sesame', { ...params, salt: randomBytes(16) })).not.toEqual(key);
    expect(await deriveKeyEncryptionKey(queue, 'open sesame', { ...params, N: 2048 })).not.toEqual(key);
    expect(await deriveKeyEncryptionKey(queue, 'open sesamE', params)).not.toEqual(key);
  });

  it('normalizes the password to NFC, so one typed on another keyboard still matches', async () => {
    const params = newKdfParams(cheap);
    expect(await deriveKeyEncryptionKey(queue, 'caf\u00e9', params)).toEqual(await deriveKeyEncryptionKey(queue, 'cafe\u0301', params));
  });

  it('refuses stored parameters that are not sane (a corrupt or hostile row)', async () => {
    const base = newKdfParams(cheap);
    const bad: KdfParams[] = [
      { ...base, N: 1000 },
      { ...base, N: 2 ** 22, r: 8 },
      { ...base, p: 0 },
      { ...base, salt: Buffer.alloc(4) },
    ];
    for (const params of bad) {
      expect(validKdfParams(params)).toBe(false);
      await expect(deriveKeyEncryptionKey(queue, 'x', params)).rejects.toThrow(/invalid/);
    }
  });
});

describe('data keys', () => {
  it('are 256 random bits, wrapped so that only the right key-encryption key and context unwrap them', () => {
    const kek = randomBytes(32);
    const dataKey = newDataKey();
    expect(dataKey.length).toBe(DATA_KEY_BYTES);
    const wrapped = wrapDataKey(kek, dataKey, 'account:1001');
    expect(wrapped).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(wrapped).not.toContain(dataKey.toString('base64url'));
    expect(unwrapDataKey(kek, wrapped, 'account:1001')).toEqual(dataKey);
    expect(unwrapDataKey(randomBytes(32), wrapped, 'account:1001')).toBeNull();
    expect(unwrapDataKey(kek, wrapped, 'account:1002')).toBeNull();
    const parts = wrapped.split('.');
    const flipped = Buffer.from(parts[2], 'base64url');
    flipped[5] ^= 1;
    expect(unwrapDataKey(kek, [parts[0], parts[1], flipped.toString('base64url'), parts[3]].join('.'), 'account:1001')).toBeNull();
  });
});

describe('sealing', () => {
  it('opens only with the same input, purpose and context', () => {
    const secret = randomBytes(32);
    const value = randomBytes(32);
    const sealed = seal(secret, 'fss/test/v1', value, 'job:1');
    expect(unseal(secret, 'fss/test/v1', sealed, 'job:1')).toEqual(value);
    expect(unseal(secret, 'fss/test/v2', sealed, 'job:1')).toBeNull();
    expect(unseal(secret, 'fss/test/v1', sealed, 'job:2')).toBeNull();
    expect(unseal(randomBytes(32), 'fss/test/v1', sealed, 'job:1')).toBeNull();
    expect(unseal(secret, 'fss/test/v1', 'v1.bad', 'job:1')).toBeNull();
  });
});
