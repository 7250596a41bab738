/**
 * Preloaded into the service by the stalls section (`node --require`), its main thread only: every
 * stretch of more than 10 ms in which its timers did not run (a timer asks every millisecond), with
 * how much CPU the main thread itself used in it (/proc/thread-self/schedstat). A probe's wait
 * also counts the time other processes had the service's CPU; this counts what the service did.
 * One line per stretch: `<end, CLOCK_MONOTONIC µs> <wall ms> <main thread's CPU ms>`.
 */
if (!require('node:worker_threads').isMainThread || !process.env.FSS_BENCH_HOLD_FILE) return;
const fs = require('node:fs');
let schedstat;
try {
  schedstat = fs.openSync('/proc/thread-self/schedstat', 'r');
} catch {
  return; // not Linux: the section reports no CPU figure
}
const text = Buffer.alloc(128);
const cpuNs = () => Number(text.toString('latin1', 0, fs.readSync(schedstat, text, 0, text.length, 0)).split(' ')[0]);
const out = fs.openSync(process.env.FSS_BENCH_HOLD_FILE, 'w');
let lastWall = performance.now();
let lastCpu = cpuNs();
setInterval(() => {
  const wall = performance.now();
  const cpu = cpuNs();
  if (wall - lastWall > 10) fs.writeSync(out, `${process.hrtime.bigint() / 1000n} ${(wall - lastWall).toFixed(1)} ${((cpu - lastCpu) / 1e6).toFixed(1)}\n`);
  lastWall = wall;
  lastCpu = cpu;
}, 1).unref();
