// Journey: open a trace large enough to be split (>= 32 MB of JSON: two 16 MB parts) and check
// that the load worker's parse workers give exactly the single-worker parse (?workers=1):
// same summary (events, phases, categories, lanes, flows, links, warnings, truncation).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, expect } = require('../pages/app');
const { realFixture, cliInfo, expectSameSummary } = require('../support/fixtures');

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

test('a large trace parsed by several workers equals the single-worker parse', async ({ app, page }) => {
  test.setTimeout(180_000);
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-parse-workers-${process.pid}.json`);
  writeBigTrace(file, 34e6);
  try {
    await app.open('?workers=1', 0);
    const one = await app.upload(file);
    expect(one.error).toBeNull();
    expect(one.summary.parse_workers).toBe(1);
    await app.screenshot('parse-workers-one');

    await app.open('', 0);
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    const many = await app.upload(file);
    expect(many.error).toBeNull();
    expect(many.summary.parse_workers).toBe(Math.min(2, Math.max(1, cores)));
    await app.screenshot('parse-workers-many');

    const strip = ({ parse_ms, parse_workers, ...rest }) => rest;
    expect(strip(many.summary)).toEqual(strip(one.summary));
    expect(one.summary.events).toBeGreaterThan(200_000);
    expect(app.pageErrors).toEqual([]);
  } finally {
    fs.rmSync(file, { force: true });
  }
});

test('Cancel while parse workers run ends the load; the next file loads', async ({ app, page }) => {
  test.setTimeout(180_000);
  // Large enough that the parse (two workers) lasts well over a second here.
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-parse-cancel-${process.pid}.json`);
  writeBigTrace(file, 150e6);
  try {
    await app.open('', 1);
    await app.fileInput.setInputFiles(file);
    await expect(page.locator('[data-testid="progress"][data-phase="parsing"]')).toBeVisible({ timeout: 60_000 });
    await page.getByTestId('cancel-load').click();
    await app.waitForLoads(2);
    const s = await app.state();
    expect(s.status).toBe('error');
    expect(s.error.kind).toBe('cancelled');
    const next = realFixture('catapult__async_begin_end.json');
    const after = await app.upload(next);
    expect(after.status).toBe('ready');
    expectSameSummary(after.summary, cliInfo(next));
    expect(app.pageErrors).toEqual([]);
  } finally {
    fs.rmSync(file, { force: true });
  }
});
