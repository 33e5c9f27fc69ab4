// A trace opened by `?url=` as the URL-load journeys compare them: its summary and kernel rows,
// the summary without what depends on how it was read, and both against the CLI's.
const { expect } = require('@playwright/test');
const { cliInfo, cliReport, expectSameSummary } = require('./fixtures');

/** Loads `url` with the page's `query` (`workers=2&`, ...) and returns its summary and kernel rows. */
async function loadUrl(app, url, query = '') {
  await app.open(`?${query}url=${encodeURIComponent(url)}`, 1);
  const state = await app.state();
  expect(state.error, `load of ${url} with ?${query}`).toBeNull();
  await app.openTab('kernels');
  const rows = await app.rows('kernel-row');
  return { summary: state.summary, rows };
}

/** A summary without its timings and parse worker count. */
const withoutTimings = ({ parse_ms, parse_workers, read_wait_ms, finish_ms, ...rest }) => rest;

/** The load (`loadUrl`'s) equals the CLI's of `file`: `info --json`'s summary, and the kernel
 * table's names, calls and totals (`report --json`). */
function expectSameAsCli({ summary, rows }, file) {
  expectSameSummary(summary, cliInfo(file));
  const kernels = cliReport(file).kernels;
  // Rows as `app.rows` reads them: a cell's `data-value` (durations in ns) or its whole text.
  expect(rows.map((r) => r.name)).toEqual(kernels.map((k) => k.name));
  expect(rows.map((r) => r.calls)).toEqual(kernels.map((k) => k.calls));
  for (const [i, k] of kernels.entries()) {
    expect(Math.abs(rows[i].total - k.total_us * 1e3), `${k.name} total (ns)`).toBeLessThanOrEqual(1e-6 * k.total_us * 1e3);
  }
}

module.exports = { loadUrl, withoutTimings, expectSameAsCli };
