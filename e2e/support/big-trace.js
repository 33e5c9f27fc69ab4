// Large generated traces for the tests that need one (parse workers, the download worker), a
// watcher of the workers a page starts, and what a cancelled load must leave behind.
const fs = require('node:fs');
const { expect } = require('@playwright/test');

/** Writes a Kineto-like trace of at least `minBytes` to `file`: nested B/E and X slices on two
 * threads, kernels on a stream linked by correlation, flows, counters, a metadata event. */
function writeBigTrace(file, minBytes) {
  const out = ['{"traceEvents":[\n{"ph":"M","name":"process_name","pid":1,"args":{"name":"trainer"}}'];
  let bytes = out[0].length;
  for (let i = 0; bytes < minBytes; i++) {
    const ts = 1000 + i * 10;
    const lines = [
      `{"ph":"B","cat":"cpu_op","name":"aten::outer","pid":1,"tid":${1 + (i % 2)},"ts":${ts},"args":{"External id": ${i}, "Input Dims": [[${i % 7}, 3], []]}}`,
      `{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":${1 + (i % 2)},"ts":${ts + 1},"dur":2,"args":{"correlation": ${i}}}`,
      `{"ph":"X","cat":"kernel","name":"gemm_${i % 13}","pid":0,"tid":7,"ts":${ts + 3},"dur":4,"args":{"correlation": ${i}, "stream": 7}}`,
      `{"ph":"s","cat":"ac2g","id":${i},"pid":1,"tid":${1 + (i % 2)},"ts":${ts + 1}}`,
      `{"ph":"f","cat":"ac2g","id":${i},"pid":0,"tid":7,"ts":${ts + 3},"bp":"e"}`,
      `{"ph":"C","name":"mem","pid":1,"ts":${ts},"args":{"bytes": ${i * 3}}}`,
      `{"ph":"E","pid":1,"tid":${1 + (i % 2)},"ts":${ts + 8}}`,
    ];
    for (const l of lines) {
      out.push(l);
      bytes += l.length + 2;
    }
  }
  fs.writeFileSync(file, out.join(',\n') + '\n]}\n');
}

/** Every worker `page` starts from now on, in start order: {name: promise of its `self.name`,
 * closed}. The name is read at once, while the worker lives (a parse worker lives only as long
 * as its load); a worker gone before it could be read shows as "unreadable" and fails the test
 * that expects a name. */
function watchWorkers(page) {
  const seen = [];
  page.on('worker', (w) => {
    const entry = { closed: false };
    entry.name = w.evaluate(() => self.name).catch((e) => `unreadable: ${e.message}`);
    w.on('close', () => { entry.closed = true; });
    seen.push(entry);
  });
  return seen;
}

/** After Cancel: the load ended as cancelled, every worker in `workers` closed, the next file
 * loads and the page threw nothing. */
async function expectCancelled(app, workers) {
  await app.waitForLoads(1);
  const s = await app.state();
  expect(s.status).toBe('error');
  expect(s.error.kind).toBe('cancelled');
  await expect.poll(() => workers.filter((w) => !w.closed).length, { message: 'Cancel closed every worker of the load' }).toBe(0);
  await app.expectNextFileLoads();
  expect(app.pageErrors).toEqual([]);
}

/** The names of the parse workers booted after a load for the next (worker.rs `warm`): one per
 * other core, at most 7 (`load::MAX_PARTS` - 1). */
async function parsersAhead(page) {
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  return Array(Math.max(0, Math.min(cores, 8) - 1)).fill('kinetoscope-parse');
}

module.exports = { writeBigTrace, watchWorkers, expectCancelled, parsersAhead };
