// Browser run benchmark (not a test): opens `?run=` on KINETOSCOPE_BENCH_RUN_DIR/run.json (8
// synthetic ranks of ~25 MB, written by `cargo test --release -p kinetoscope --test all run_view:: --
// --ignored`; or any `kinetoscope-synth demo-run DIR` with a run.json listing its files), served
// by the test over HTTP, and prints one JSON line: time from navigation to the drawn
// heatmap and to the ranks timeline's panels (its default ranks held), per-rank load times as
// the page saw them, long tasks after the ranks were in (through the hold), and the
// tab's memory (the page's JS heap from CDP `Performance.getMetrics` and `performance.memory`;
// the load worker's wasm memory after the ranks, which it reports). Skipped unless the variable is
// set; no timed assertion.
const fs = require('node:fs');
const path = require('node:path');
const { test, expect } = require('../pages/app');
const { serve } = require('../support/servers');

const dir = process.env.KINETOSCOPE_BENCH_RUN_DIR;

test('browser run benchmark: the ranks of a manifest to the heatmap', async ({ app, page }) => {
  test.skip(!dir, 'set KINETOSCOPE_BENCH_RUN_DIR');
  test.setTimeout(15 * 60_000);
  // A real HTTP server (another origin, CORS open): a route fulfilled by Playwright passes each
  // body through the DevTools protocol, which cost more than the page's own work per rank.
  const server = await serve({ '/bench-run/': dir }, { 'access-control-allow-origin': '*' });
  const bytes = fs.readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'run.json')
    .reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
  const started = Date.now();
  // KINETOSCOPE_BENCH_WORKERS=1: the files one after another on the load worker (no parse
  // workers loading files beside it), the anchor for the default.
  const workers = process.env.KINETOSCOPE_BENCH_WORKERS ? `&workers=${process.env.KINETOSCOPE_BENCH_WORKERS}` : '';
  await page.goto('/?run=' + encodeURIComponent(`${server.origin}/bench-run/run.json`) + workers);
  // Per-file arrival times as polled by the page (every 50 ms).
  const arrivals = await page.evaluate(() => new Promise((resolve) => {
    const seen = [];
    const poll = () => {
      const r = window.kinetoscope && window.kinetoscope.run;
      if (r && r.loaded > seen.length) for (let i = seen.length; i < r.loaded; i++) seen.push(performance.now());
      if (r && r.total > 0 && r.heatmap.length > 0 && !r.pending) resolve({ seen, heatmapAt: performance.now(), navStart: 0 });
      else setTimeout(poll, 50);
    };
    poll();
  }));
  const toHeatmapMs = Date.now() - started;
  // The ranks timeline then holds its default ranks (reloading the models dropped meanwhile).
  await page.waitForFunction(() => {
    const s = window.kinetoscope.run.stack;
    return s && s.held.length > 0 && s.reloading === null && s.panels.length === s.held.length;
  }, null, { timeout: 10 * 60_000, polling: 100 });
  await app.idle();
  const stackReadyMs = Date.now() - started;
  const state = await page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.run)));
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8'));
  expect(state.total).toBe(manifest.ranks.length);
  const inAt = arrivals.seen[arrivals.seen.length - 1];
  const long = await page.evaluate(() => window.kinetoscope.longTasks);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  const metric = (name) => (metrics.find((m) => m.name === name) || {}).value;
  const heap = await page.evaluate(() => performance.memory && { used: performance.memory.usedJSHeapSize, total: performance.memory.totalJSHeapSize });
  console.log(JSON.stringify({
    bench: 'run_to_heatmap', target: 'browser', ranks: state.total, bytes, workers: process.env.KINETOSCOPE_BENCH_WORKERS || 'default',
    loaded_by_parse_workers: state.parseWorkers.filter((w) => w !== null).length,
    to_heatmap_ms: toHeatmapMs, heatmap_at_ms: Math.round(arrivals.heatmapAt),
    ranks_timeline_ready_ms: stackReadyMs, ranks_stacked: state.stack && state.stack.held.length,
    rank_in_at_ms: arrivals.seen.map(Math.round),
    long_tasks_after_ranks_in: long.list.filter(([s]) => s >= inAt),
    long_tasks_total: long.count, long_task_max_ms: long.maxMs,
    page_js_heap_used: metric('JSHeapUsedSize'), page_js_heap_total: metric('JSHeapTotalSize'),
    performance_memory: heap, worker_wasm_bytes: state.workerMemoryBytes,
  }));
  await server.close();
});
