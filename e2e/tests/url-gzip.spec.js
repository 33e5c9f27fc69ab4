// Journey: open a generated ~200 MB trace gzipped (`.json.gz`) by `?url=`: the download worker
// inflates it and cuts it into parts as it arrives, and a parse worker per core parses them in
// turn (summary.parse_workers is 2 on two cores); the summary and kernel table equal the single parser's
// (`?workers=1`: inflated and parsed as it arrives in the load worker) and the CLI's. The same
// from a server without `Range` (Cancel while it inflates: download-worker.spec.js).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { test, expect } = require('../pages/app');
const { writeBigTrace, watchWorkers } = require('../support/big-trace');
const { serveFile } = require('../support/servers');
const { cliInfo, cliReport, expectSameSummary } = require('../support/fixtures');

/** Loads `url` with the page's `query` and returns its summary and kernel rows. */
async function loadUrl(app, url, query = '') {
  await app.open(`?${query}url=${encodeURIComponent(url)}`, 1);
  const state = await app.state();
  expect(state.error, `load of ${url} with ?${query}`).toBeNull();
  await app.openTab('kernels');
  const rows = await app.rows('kernel-row');
  return { summary: state.summary, rows };
}

const strip = ({ parse_ms, parse_workers, read_wait_ms, finish_ms, ...rest }) => rest;

test.describe('a gzip by URL', () => {
  const json = path.join(os.tmpdir(), `kinetoscope-e2e-url-gzip-${process.pid}.json`);
  const gz = `${json}.gz`;

  test.beforeAll(() => {
    writeBigTrace(json, 200e6);
    fs.writeFileSync(gz, zlib.gzipSync(fs.readFileSync(json), { level: 1 }));
    fs.rmSync(json, { force: true });
  });

  test.afterAll(() => fs.rmSync(gz, { force: true }));

  test('is inflated by the download worker and parsed in parts by a parse worker per core, equal to one parser and the CLI', async ({ app }) => {
    test.setTimeout(600_000);
    const withRanges = await serveFile(gz, { ranges: true });
    const without = await serveFile(gz, { ranges: false });
    try {
      const one = await loadUrl(app, withRanges.url, 'workers=1&');
      expect(one.summary.parse_workers).toBe(1);

      // The machine's default, a part per core (`?workers=N` holds a URL whole instead).
      const cores = await app.page.evaluate(() => navigator.hardwareConcurrency);
      expect(cores, 'two cores or more').toBeGreaterThan(1);
      const workers = watchWorkers(app.page);
      const two = await loadUrl(app, withRanges.url);
      expect(two.summary.parse_workers).toBe(Math.min(cores, 8));
      const names = await Promise.all(workers.map((w) => w.name));
      expect(names, 'a download worker and a parse worker per core for this load').toEqual(expect.arrayContaining(['kinetoscope-fetch', ...Array(Math.min(cores, 8)).fill('kinetoscope-parse')]));
      expect(strip(two.summary)).toEqual(strip(one.summary));
      expect(two.rows).toEqual(one.rows);
      expectSameSummary(two.summary, cliInfo(gz));
      const kernels = cliReport(gz).kernels;
      expect(two.rows.map((r) => r.name)).toEqual(kernels.map((k) => k.name));
      expect(two.rows.map((r) => r.calls)).toEqual(kernels.map((k) => k.calls));

      const plain = await loadUrl(app, without.url);
      expect(plain.summary.parse_workers).toBe(Math.min(cores, 8));
      expect(strip(plain.summary)).toEqual(strip(one.summary));
      expect(plain.rows).toEqual(one.rows);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await withRanges.close();
      await without.close();
    }
  });
});
