#!/usr/bin/env node
// The `fss` command: runs the TypeScript sources through tsx's loader, so that there is no build
// step between `npm install` and `npm start`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../server/src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
