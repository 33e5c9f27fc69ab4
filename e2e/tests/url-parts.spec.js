// Journey: open a generated ~200 MB trace by `?url=` from a server that answers `Range` (as
// static hosts and `kinetoscope serve` do): the load worker and a parse worker each fetch their
// own part in ranged requests and parse it (summary.parse_workers is 2), and the trace's summary
// and kernel table equal the single-parser load's (`?workers=1`) and the CLI's (`report --json`,
// `info --json`). The same file from a server without `Range` still loads, streamed on one core,
// with the same summary and table. Servers on ports picked free at run time (servers.js).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, expect } = require('../pages/app');
const { writeBigTrace } = require('../support/big-trace');
const { serveFile } = require('../support/servers');
const { loadUrl, withoutTimings, expectSameAsCli } = require('../support/url-load');

test('a URL on a server answering Range is parsed in two ranged parts, equal to the single parser, the CLI and a server without Range', async ({ app }) => {
  test.setTimeout(600_000);
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-url-parts-${process.pid}.json`);
  writeBigTrace(file, 200e6);
  const withRanges = await serveFile(file, { ranges: true });
  const without = await serveFile(file, { ranges: false });
  try {
    const one = await loadUrl(app, withRanges.url, 'workers=1&');
    expect(one.summary.parse_workers).toBe(1);
    expect(withRanges.ranged(), '?workers=1 streams the one body').toBe(0);

    const two = await loadUrl(app, withRanges.url, 'workers=2&');
    expect(two.summary.parse_workers).toBe(2);
    // The head and a window at the cut (sync probes), then each part's ranged slices.
    expect(withRanges.ranged()).toBeGreaterThanOrEqual(4);

    expect(withoutTimings(two.summary)).toEqual(withoutTimings(one.summary));
    expect(two.rows).toEqual(one.rows);
    expectSameAsCli(two, file);

    // The machine's default (one part per core) takes the same path where there are cores.
    const cores = await app.page.evaluate(() => navigator.hardwareConcurrency);
    const byDefault = await loadUrl(app, withRanges.url);
    expect(byDefault.summary.parse_workers).toBe(Math.min(cores, 2));
    expect(withoutTimings(byDefault.summary)).toEqual(withoutTimings(one.summary));

    // No `Accept-Ranges`: today's streamed path, whatever the cores.
    const before = withRanges.ranged();
    const plain = await loadUrl(app, without.url);
    expect(plain.summary.parse_workers).toBe(1);
    expect(without.ranged()).toBe(0);
    expect(withoutTimings(plain.summary)).toEqual(withoutTimings(one.summary));
    expect(plain.rows).toEqual(one.rows);
    expect(withRanges.ranged()).toBe(before);
    expect(app.pageErrors).toEqual([]);
  } finally {
    await withRanges.close();
    await without.close();
    fs.rmSync(file, { force: true });
  }
});
