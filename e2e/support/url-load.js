// A trace opened by `?url=` as the URL-load journeys compare them: its summary and kernel rows,
// and the summary without what depends on how it was read.
const { expect } = require('@playwright/test');

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

module.exports = { loadUrl, withoutTimings };
