import { describe, expect, test } from 'vitest';
import { HashQueue } from '../../src/operations/crypto/hash-queue';
import { defaultScryptParams, DUMMY_PASSWORD_HASH, hashPassword, hashSecret, verifyPassword } from '../../src/operations/accounts/passwords';

const fast = { N: 1024, r: 8, p: 1 };
const queue = new HashQueue(2, 8);

describe('password hashing', () => {
  test('a hash names scrypt and its parameters, then the salt and the hash', async () => {
    expect(await hashPassword(queue, 'secret123')).toMatch(/^scrypt\$32768\$8\$3\$[\w-]{22}\$[\w-]{43}$/);
  });

  test('the right password verifies, a wrong one does not', async () => {
    const hash = await hashPassword(queue, 'secret123', fast);
    expect(await verifyPassword(queue, 'secret123', hash)).toBe(true);
    expect(await verifyPassword(queue, 'secret124', hash)).toBe(false);
    expect(await verifyPassword(queue, '', hash)).toBe(false);
  });

  test('each hash has its own salt', async () => {
    expect(await hashPassword(queue, 'secret123', fast)).not.toBe(await hashPassword(queue, 'secret123', fast));
  });

  test('a hash made with other parameters still verifies (parameters are read from the hash)', async () => {
    const hash = await hashPassword(queue, 'secret123', { N: 2048, r: 4, p: 2 });
    expect(hash.startsWith('scrypt$2048$4$2$')).toBe(true);
    expect(await verifyPassword(queue, 'secret123', hash)).toBe(true);
  });

  test('a malformed or hostile hash never verifies and never throws', async () => {
    expect(await verifyPassword(queue, 'x', '')).toBe(false);
    expect(await verifyPassword(queue, 'x', 'bcrypt$abc')).toBe(false);
    expect(await verifyPassword(queue, 'x', 'scrypt$1000$8$1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA')).toBe(false);
    expect(await verifyPassword(queue, 'x', 'scrypt$1073741824$8$1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA')).toBe(false);
  });

  test('the dummy hash for unknown accounts costs what a real one costs: the default parameters', () => {
    const { N, r, p } = defaultScryptParams;
    expect(DUMMY_PASSWORD_HASH.startsWith(`scrypt$${N}$${r}$${p}$`)).toBe(true);
  });

  test('the dummy hash matches no likely password', async () => {
    expect(await verifyPassword(queue, '', DUMMY_PASSWORD_HASH)).toBe(false);
  });

  test('tokens and API keys are hashed with SHA-256, as lowercase hex', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
