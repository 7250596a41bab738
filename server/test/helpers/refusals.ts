/**
 * The refusal an operation throws, for tests that check its code and message.
 */
import { expect } from 'vitest';
import { OpError } from '../../src/operations/errors';

export async function rejected(promise: Promise<unknown>): Promise<OpError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpError);
  return error as OpError;
}
