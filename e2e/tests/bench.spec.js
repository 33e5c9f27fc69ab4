// Browser benchmark (not a test): loads KINETOSCOPE_BENCH_URL through `?url=` and prints one JSON
// line per run with the worker's parse+index time, then one line with the timeline's frame times
// while zooming and panning (keys held, drags, wheel) and the first paint after the load, then
// one line with the time each panel (ops, kernels, steps, findings) and a comparison against a
// small real trace take on the loaded trace, with the tab's memory meanwhile, then V8's own
// JSON.parse of the same bytes (and, for a picked file, the browser's read of it alone); then
// opens the demo in fresh browser contexts and prints the main thread's long tasks from the page's
// start to the end of its load. Skipped unless scripts/bench sets the variable.
const { AppPage, test, expect } = require('../pages/app');
const { realFixture } = require('../support/fixtures');
const { chromiumRss, sampleRss, v8JsonParseMs, postBenchBytes, readAloneMs } = require('../support/bench');

const url = process.env.KINETOSCOPE_BENCH_URL;
// KINETOSCOPE_BENCH_FILE=PATH: each run picks that file (the same bytes as the URL, read from
// disk by the page as a user's pick or drop is) instead of opening `?url=`.
const pickedFile = process.env.KINETOSCOPE_BENCH_FILE;
// KINETOSCOPE_BENCH_POSTED=1: each run fetches the URL's bytes into the page first, then posts
// them to the page as another page would (docs/viewer.md): parse + index timed on bytes already
// in memory, as V8's JSON.parse is.
const posted = Boolean(process.env.KINETOSCOPE_BENCH_POSTED);

test('browser parse+index benchmark', async ({ app, page }) => {
  test.skip(!url, 'set by scripts/bench');
  test.setTimeout(15 * 60_000);
  const runs = Number(process.env.KINETOSCOPE_BENCH_RUNS || 2);
  // KINETOSCOPE_BENCH_WORKERS=N sets the parse workers (the page's ?workers=N): 1 measures the
  // single-worker parse; unset, one per core.
  const workers = process.env.KINETOSCOPE_BENCH_WORKERS;
  const query = `?url=${encodeURIComponent(url)}` + (workers ? `&workers=${workers}` : '');
  let summary = null;
  let idle = 0;
  for (let run = 0; run < runs; run++) {
    // Memory above the idle page: the demo open, then the trace loaded in its place.
    await app.open((pickedFile || posted) && workers ? `?workers=${workers}` : '');
    if (posted) {
      await page.evaluate(async (href) => { window.__benchBytes = await (await fetch(href)).arrayBuffer(); }, url);
    }
    idle = chromiumRss();
    const stop = sampleRss();
    const started = Date.now();
    if (pickedFile) {
      await app.upload(pickedFile);
    } else if (posted) {
      await postBenchBytes(app);
    } else {
      await app.open(query);
    }
    const wall = Date.now() - started;
    const peak = stop();
    const state = await app.state();
    expect(state.error).toBeNull();
    summary = state.summary;
    const secs = summary.parse_ms / 1000;
    console.log(JSON.stringify({
      bench: 'parse_index', target: 'browser-wasm-worker', file: pickedFile || url, source: pickedFile ? 'picked' : posted ? 'posted' : 'url', run,
      json_bytes: summary.json_bytes, events: summary.events, parse_ms: summary.parse_ms,
      workers: summary.parse_workers ?? 1, read_wait_ms: summary.read_wait_ms, finish_ms: summary.finish_ms,
      mb_per_s: summary.json_bytes / 1e6 / secs, events_per_s: summary.events / secs, page_load_ms: wall,
      tab_rss_idle_bytes: idle, tab_rss_peak_above_idle_bytes: peak - idle, tab_rss_ratio: (peak - idle) / summary.json_bytes,
    }));
  }

  // Timeline frames on the last load: hold W / S / A / D, drag, ctrl+wheel.
  await app.waitForTimeline();
  const { firstPaintMs: first, firstTilesMs } = await app.timeline();
  const box = await app.canvas.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  // Frame intervals as the page sees them (rAF to rAF), measured apart from the app: unlike the
  // app's own frame time (its paint's script), they include Chromium's style, raster and commit.
  await page.evaluate(() => {
    const gaps = (window.__benchGaps = []);
    let last = performance.now();
    const tick = (t) => { gaps.push(t - last); last = t; if (!window.__benchStop) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
  for (const [key, ms] of [['w', 1500], ['d', 800], ['w', 1200], ['a', 800], ['s', 1000], ['d', 600], ['s', 1500]]) {
    await page.keyboard.down(key);
    await page.waitForTimeout(ms);
    await page.keyboard.up(key);
  }
  for (let i = 0; i < 10; i++) {
    await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2 + 20, { steps: 12 });
    await page.mouse.up();
  }
  await page.keyboard.down('Control');
  for (let i = 0; i < 20; i++) await page.mouse.wheel(0, i < 10 ? -120 : 120);
  await page.keyboard.up('Control');
  const gaps = await page.evaluate(() => { window.__benchStop = true; return window.__benchGaps.sort((a, b) => a - b); });
  const gapAt = (q) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))];
  await app.idle();
  const t = await app.timeline();
  const long = await page.evaluate(() => window.kinetoscope.longTasks);
  const loadedAt = t.loadedAtMs;
  const during = long.list.filter(([start]) => start < loadedAt);
  const after = long.list.filter(([start]) => start >= loadedAt);
  const longest = (l) => l.reduce((m, [, d]) => Math.max(m, d), 0);
  console.log(JSON.stringify({
    bench: 'timeline_frames', target: 'browser-canvas', file: url, frames: t.frames.count,
    p50_ms: t.frames.p50Ms, p95_ms: t.frames.p95Ms, max_ms: t.frames.maxMs,
    raf_frames: gaps.length, raf_interval_p50_ms: gapAt(0.5), raf_interval_p95_ms: gapAt(0.95), raf_interval_max_ms: gaps[gaps.length - 1],
    first_paint_ms: first,
    // The worker's parse_ms runs from the response's first byte (bytes are parsed as they
    // arrive) to the loaded trace; the first paint follows.
    first_byte_to_paint_ms: summary.parse_ms + first,
    first_tiles_ms: firstTilesMs,
    rects_cached: t.rects, lanes: t.lanes.length, long_tasks: long.count, longest_task_ms: long.maxMs,
    long_tasks_loading: during.length, longest_loading_ms: longest(during),
    long_tasks_after_load: after.length, longest_after_load_ms: longest(after),
    // [start relative to the load's end, duration] of each long task, ms.
    long_tasks_ms: long.list.map(([start, d]) => [Math.round(start - loadedAt), Math.round(d)]),
  }));
  // Every panel on the loaded trace, then a comparison with it as the baseline.
  const stop = sampleRss();
  const panels = {};
  for (const tab of ['ops', 'kernels', 'steps', 'findings']) {
    const started = Date.now();
    await app.openTab(tab);
    const table = await app.table();
    panels[`${tab}_ms`] = Date.now() - started;
    panels[`${tab}_rows`] = tab === 'findings'
      ? await page.evaluate(() => window.kinetoscope.findings.rules.length)
      : table && table.rows;
  }
  const compareStarted = Date.now();
  await app.compareWith(realFixture('param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json'));
  const compared = await app.compare();
  panels.compare_ms = Date.now() - compareStarted;
  panels.compare_ops = compared && compared.ops;
  panels.compare_verdict = compared && compared.verdict;
  const peak = stop();
  expect(await app.state().then((s) => s.error)).toBeNull();
  console.log(JSON.stringify({
    bench: 'panels', target: 'browser', file: url, ...panels,
    tab_rss_peak_above_idle_bytes: peak - idle, tab_rss_ratio: (peak - idle) / summary.json_bytes,
  }));
  // V8's bare JSON.parse of the same bytes, in the same browser and run, after our loads and frames.
  if (!process.env.KINETOSCOPE_BENCH_NO_V8) {
    const href = new URL(url, page.url()).href;
    const v8 = await v8JsonParseMs(page, href);
    const ours = summary.json_bytes / 1e6 / (summary.parse_ms / 1000);
    const theirs = summary.json_bytes / 1e6 / (v8.ms / 1000);
    console.log(JSON.stringify({
      bench: 'v8_json_parse', target: 'browser-main-thread', file: url, json_bytes: summary.json_bytes,
      pieces: v8.pieces, json_parse_ms: v8.ms, mb_per_s: theirs, ours_mb_per_s: ours, ratio: ours / theirs,
    }));
    // A picked file: what reading it alone costs, and the most parse + index could then reach
    // against V8 if it took no time at all.
    if (pickedFile) {
      const workers = summary.parse_workers ?? 1;
      const readMs = await readAloneMs(page.context(), { file: pickedFile }, workers);
      console.log(JSON.stringify({
        bench: 'file_read', target: 'browser-workers', file: pickedFile, workers, read_ms: readMs,
        mb_per_s: summary.json_bytes / 1e3 / readMs, v8_ratio_if_parse_were_free: v8.ms / readMs,
      }));
    }
  }
});

test('page boot benchmark', async ({ browser }) => {
  test.skip(!url, 'set by scripts/bench');
  test.setTimeout(5 * 60_000);
  const runs = Number(process.env.KINETOSCOPE_BENCH_BOOT_RUNS || 10);
  const tasks = [];
  const perRun = [];
  for (let run = 0; run < runs; run++) {
    // A fresh context: no HTTP cache, so no code cache for the wasm either, as on a first visit.
    const context = await browser.newContext({ viewport: { width: 1600, height: 900 } });
    const app = new AppPage(await context.newPage());
    // Nothing reads `window.kinetoscope` until the page is idle (a read rebuilds its snapshot):
    // the hook is defined once the page is built, with the demo's load running.
    await app.page.goto('/');
    await app.waitForHook();
    await app.idle();
    await app.waitForTimeline();
    const { list } = await app.page.evaluate(() => window.kinetoscope.longTasks);
    expect(app.pageErrors).toEqual([]);
    tasks.push(...list);
    perRun.push(list.length);
    await context.close();
  }
  const durations = tasks.map(([, d]) => Math.round(d)).sort((a, b) => a - b);
  console.log(JSON.stringify({
    bench: 'page_boot', target: 'browser-demo', runs,
    // From navigation to the demo's load settled, timeline painted and panels built.
    long_tasks: tasks.length, runs_without_long_task: perRun.filter((n) => n === 0).length,
    longest_ms: durations[durations.length - 1] ?? 0, long_tasks_ms: durations,
  }));
});
