// The entry of a bundle run as a command (`node <bundle> serve`): server/scripts/build-server.ts's `command`.
import { main } from '../src/cli';

process.exitCode = await main(process.argv.slice(2));
