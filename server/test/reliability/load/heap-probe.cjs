/**
 * Preloaded into the load test's server (`node --expose-gc --require heap-probe.cjs`, load.test.ts): every two seconds
 * a full garbage collection, then the JavaScript heap that survived it, as a JSON line appended to LOAD_HEAP_PROBE_FILE:
 * `{"time": epoch ms, "heap": heapUsed, "gcMs": the collection's duration}`. Without it the heap (and so RSS) follows
 * V8's schedule, growing tens of MiB between major collections, which hides or fakes a leak in a 60 s run.
 */
const { appendFileSync } = require('node:fs');
const { isMainThread } = require('node:worker_threads');

const file = process.env.LOAD_HEAP_PROBE_FILE;
if (file && isMainThread && typeof globalThis.gc === 'function') {
  delete process.env.LOAD_HEAP_PROBE_FILE; // not for processes the server starts
  setInterval(() => {
    const start = performance.now();
    globalThis.gc();
    const gcMs = performance.now() - start;
    appendFileSync(file, `${JSON.stringify({ time: Date.now(), heap: process.memoryUsage().heapUsed, gcMs })}\n`);
  }, 2000).unref();
}
