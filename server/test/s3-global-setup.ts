/**
 * Global setup of the "s3" project (vitest.config.ts): one S3-compatible server for the whole run
 * (helpers/s3-server.ts), in the main vitest process, handed to the workers with provide/inject
 * (helpers/content.ts). Stopped, and its folder removed, when the run ends.
 */
import type { TestProject } from 'vitest/node';
import type {} from './helpers/content';
import { startTestS3Server } from './helpers/s3-server';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestS3Server();
  const { close, hold: _hold, ...endpoint } = server;
  project.provide('fssS3', endpoint);
  return close;
}
