// Browser benchmark (not a test): loads KINETOSCOPE_BENCH_URL through `?url=` and prints one JSON
// line with the worker's parse+index time. Skipped unless scripts/bench sets the variable.
const { test, expect } = require('../pages/app');

const url = process.env.KINETOSCOPE_BENCH_URL;

test('browser parse+index benchmark', async ({ app, page }) => {
  test.skip(!url, 'set by scripts/bench');
  test.setTimeout(15 * 60_000);
  const runs = Number(process.env.KINETOSCOPE_BENCH_RUNS || 2);
  for (let run = 0; run < runs; run++) {
    const started = Date.now();
    await app.open(`?url=${encodeURIComponent(url)}`);
    const wall = Date.now() - started;
    const { summary, error } = await app.state();
    expect(error).toBeNull();
    const secs = summary.parse_ms / 1000;
    console.log(JSON.stringify({
      bench: 'parse_index', target: 'browser-wasm-worker', file: url, run,
      json_bytes: summary.json_bytes, events: summary.events, parse_ms: summary.parse_ms,
      mb_per_s: summary.json_bytes / 1e6 / secs, events_per_s: summary.events / secs, page_load_ms: wall,
    }));
    await page.goto('about:blank');
  }
});
