/**
 * `npm run generate`: writes the files derived from the operation catalog, and the web app's copy of
 * the name rule.
 * `npm run generate -- --check` only compares, and exits 1 when a file is out of date.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_CLIENT_PATH, GENERATED_RESULTS_PATH, generateClientSource, generateResultsSource } from './client-generator';
import { GENERATED_NAME_RULE_PATH, generateNameRuleSource } from './name-rule-copy';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const check = process.argv.includes('--check');

const outputs = [
  { file: GENERATED_CLIENT_PATH, source: generateClientSource() },
  { file: GENERATED_RESULTS_PATH, source: generateResultsSource() },
  { file: GENERATED_NAME_RULE_PATH, source: generateNameRuleSource() },
];

let stale = 0;
for (const { file, source } of outputs) {
  const target = path.join(root, file);
  const current = await readFile(target, 'utf8').catch(() => null);
  if (current === source) {
    console.log(`up to date: ${file}`);
  } else if (check) {
    console.error(`out of date: ${file} (run npm run generate)`);
    stale++;
  } else {
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, source);
    console.log(`wrote ${file}`);
  }
}
process.exitCode = stale ? 1 : 0;
