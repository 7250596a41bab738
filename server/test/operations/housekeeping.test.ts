import { expect, test } from 'vitest';
import type { Logger } from '../../src/log';
import { scheduleHousekeeping } from '../../src/operations/admin/housekeeping';
import { closeDatabase } from '../../src/storage/db/engine/database';
import { openTestServices } from '../helpers/database';

function capturingLogger(errors: unknown[]): Logger {
  return { info: () => {}, warn: () => {}, request: () => {}, error: (...args: unknown[]) => errors.push(args) } as Logger;
}

test('stopping housekeeping waits for the task under way and runs no other, so the database can close at once', async () => {
  const services = await openTestServices();
  const errors: unknown[] = [];
  // The first round starts at once: stopping now stops it in the middle.
  const stop = scheduleHousekeeping(services, capturingLogger(errors));
  await stop();
  await closeDatabase(services.db);
  // A task started after the database closed would fail and log; give any such a chance to run.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(errors).toEqual([]);
});
