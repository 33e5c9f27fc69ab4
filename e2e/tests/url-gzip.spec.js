// Journey: open a generated ~200 MB trace gzipped (`.json.gz`) by `?url=`: the download worker
// inflates it, the load worker cuts it into parts as it arrives, and two parse workers
// (`?workers=2`; by default a parse worker per core from three cores) parse them in turn
// (summary.parse_workers is 2); the summary and kernel table equal the single parser's
// (`?workers=1`: inflated and parsed as it arrives in the load worker) and the CLI's. The same
// from a server without `Range`; a gzip of two members (the browser's inflater stops after the
// first) is read again on one core and equals the CLI (Cancel while it inflates:
// download-worker.spec.js).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { test, expect } = require('../pages/app');
const { writeBigTrace, watchWorkers } = require('../support/big-trace');
const { serveFile } = require('../support/servers');
const { loadUrl, withoutTimings, expectSameAsCli } = require('../support/url-load');

test.describe('a gzip by URL', () => {
  const json = path.join(os.tmpdir(), `kinetoscope-e2e-url-gzip-${process.pid}.json`);
  const gz = `${json}.gz`;

  // The same JSON in two gzip members, as `cat a.gz b.gz` makes: the browser's inflater stops
  // after the first, so the load worker reads it again on one core (loader::inflate).
  const multi = `${json}.multi.gz`;

  test.beforeAll(() => {
    writeBigTrace(json, 200e6);
    const bytes = fs.readFileSync(json);
    fs.writeFileSync(gz, zlib.gzipSync(bytes, { level: 1 }));
    const half = bytes.length >> 1;
    fs.writeFileSync(multi, Buffer.concat([zlib.gzipSync(bytes.subarray(0, half), { level: 1 }), zlib.gzipSync(bytes.subarray(half), { level: 1 })]));
    fs.rmSync(json, { force: true });
  });

  test.afterAll(() => {
    fs.rmSync(gz, { force: true });
    fs.rmSync(multi, { force: true });
  });

  test('is inflated by the download worker and parsed in parts by the parse workers, equal to one parser and the CLI', async ({ app }) => {
    test.setTimeout(600_000);
    const withRanges = await serveFile(gz, { ranges: true });
    const without = await serveFile(gz, { ranges: false });
    try {
      const one = await loadUrl(app, withRanges.url, 'workers=1&');
      expect(one.summary.parse_workers).toBe(1);

      // `?workers=2`: two parse workers (the default from three cores; loader/cutting.rs).
      const workers = watchWorkers(app.page);
      const two = await loadUrl(app, withRanges.url, 'workers=2&');
      expect(two.summary.parse_workers).toBe(2);
      const names = await Promise.all(workers.map((w) => w.name));
      expect(names, 'a download worker and two parse workers for this load').toEqual(expect.arrayContaining(['kinetoscope-fetch', 'kinetoscope-parse', 'kinetoscope-parse']));
      expect(withoutTimings(two.summary)).toEqual(withoutTimings(one.summary));
      expect(two.rows).toEqual(one.rows);
      expectSameAsCli(two, gz);

      const plain = await loadUrl(app, without.url, 'workers=2&');
      expect(plain.summary.parse_workers).toBe(2);
      expect(withoutTimings(plain.summary)).toEqual(withoutTimings(one.summary));
      expect(plain.rows).toEqual(one.rows);

      // The machine's default: in parts from three cores, on one below.
      const cores = await app.page.evaluate(() => navigator.hardwareConcurrency);
      const byDefault = await loadUrl(app, without.url);
      expect(byDefault.summary.parse_workers).toBe(cores >= 3 ? Math.min(cores, 8) : 1);
      expect(withoutTimings(byDefault.summary)).toEqual(withoutTimings(one.summary));
      expect(app.pageErrors).toEqual([]);
    } finally {
      await withRanges.close();
      await without.close();
    }
  });

  test('of two members is read again on one core when the browser stops after the first, equal to the CLI', async ({ app }) => {
    test.setTimeout(300_000);
    const server = await serveFile(multi, { ranges: false });
    try {
      const two = await loadUrl(app, server.url, 'workers=2&');
      expect(two.summary.parse_workers, 'inflated by the load worker, as the CLI does').toBe(1);
      expectSameAsCli(two, multi);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
