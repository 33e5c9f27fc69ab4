// Load benchmark (not a test): the trace at KINETOSCOPE_BENCH_LOAD (JSON, or a gzip by URL) opened the three
// ways a trace reaches the page: by `?url=` from a server answering `Range` (servers.js, as
// static hosts and `kinetoscope serve` do), posted as bytes by another page (docs/viewer.md),
// and picked. One JSON line per run: parse+index ms, parse workers, the tab's memory above idle
// against the JSON's size, and the main thread's longest task while the load ran; then one line
// per way with its best parse+index against V8's own JSON.parse of the same bytes in the same
// browser and run (`ratio` > 1: faster than JSON.parse), and for a picked file and a URL in
// parts the browser's delivery of the bytes alone (`read_alone_ms`, the floor under
// `parse_ms`). Skipped unless scripts/bench sets it.
const fs = require('node:fs');
const { test, expect } = require('../pages/app');
const { serveFile } = require('../support/servers');
const { settledRss, sampleRss, v8JsonParseMs, postBenchBytes, readAloneMs } = require('../support/bench');

const file = process.env.KINETOSCOPE_BENCH_LOAD;

/** The main thread's longest task (ms) among those started after `since` (page clock). */
async function longestTaskSince(page, since) {
  const { list } = await page.evaluate(() => window.kinetoscope.longTasks);
  return list.filter(([start]) => start >= since).reduce((m, [, d]) => Math.max(m, d), 0);
}

test('load benchmark: ?url=, posted and picked against V8 JSON.parse', async ({ app, page }) => {
  test.skip(!file, 'set by scripts/bench');
  test.setTimeout(60 * 60_000);
  const runs = Number(process.env.KINETOSCOPE_BENCH_RUNS || 2);
  const sources = (process.env.KINETOSCOPE_BENCH_SOURCES || 'url,posted,picked').split(',');
  const json = fs.statSync(file).size;
  // KINETOSCOPE_BENCH_RANGES=0: a server without `Range`, so `?url=` takes the streamed path.
  const ranges = process.env.KINETOSCOPE_BENCH_RANGES !== '0';
  const server = await serveFile(file, { ranges });
  const best = {};
  const readAlone = {};
  try {
    for (const source of sources) {
      // Picked and by URL in parts: the browser's delivery of the bytes alone (by a reader per
      // part, as the loads read: `load::MAX_PARTS`, `ranges::MAX_REQUESTS`), timed first, in a
      // page of its own; then the most parse + index could reach against V8 if it took no time.
      const from = { picked: { file }, url: ranges && { url: server.url, size: json } }[source];
      const readers = Math.min(await page.evaluate(() => navigator.hardwareConcurrency), source === 'url' ? 6 : 8);
      readAlone[source] = from ? await readAloneMs(page.context(), from, readers) : null;
      for (let run = 0; run < runs; run++) {
        // Memory above the idle page: the demo open, then the trace loaded in its place.
        await app.open('');
        if (source === 'posted') {
          await page.evaluate(async (href) => { window.__benchBytes = await (await fetch(href)).arrayBuffer(); }, server.url);
        }
        const idle = await settledRss();
        const stop = sampleRss();
        let since = await page.evaluate(() => performance.now());
        if (source === 'url') {
          // KINETOSCOPE_BENCH_WORKERS=1: the one-core anchor (a gzip inflated and parsed as it
          // arrives by the load worker alone).
          const workers = process.env.KINETOSCOPE_BENCH_WORKERS ? `workers=${process.env.KINETOSCOPE_BENCH_WORKERS}&` : '';
          await app.open(`?${workers}url=${encodeURIComponent(server.url)}`);
          since = 0;
        } else if (source === 'picked') {
          await app.upload(file);
        } else {
          await postBenchBytes(app);
        }
        const peak = stop();
        const state = await app.state();
        expect(state.error).toBeNull();
        const s = state.summary;
        best[source] = Math.min(best[source] ?? Infinity, s.parse_ms);
        console.log(JSON.stringify({
          bench: 'load', source, ranges, run, json_bytes: s.json_bytes, events: s.events, parse_ms: s.parse_ms,
          workers: s.parse_workers, read_wait_ms: s.read_wait_ms, mb_per_s: s.json_bytes / 1e3 / s.parse_ms,
          tab_rss_above_idle_bytes: peak - idle, tab_rss_ratio: (peak - idle) / s.json_bytes,
          longest_main_task_ms: await longestTaskSince(page, since),
        }));
      }
    }
    // V8's bare JSON.parse of the same bytes (of a gzip, of the JSON beside it, `X.json` for
    // `X.json.gz`), in the same browser and run, after the loads.
    const twin = file.endsWith('.gz') && fs.existsSync(file.slice(0, -3)) ? await serveFile(file.slice(0, -3), { ranges }) : server;
    const v8 = await v8JsonParseMs(page, twin.url);
    if (twin !== server) await twin.close();
    for (const source of sources) {
      console.log(JSON.stringify({
        bench: 'load_vs_json_parse', source, json_bytes: json, parse_index_ms: best[source], json_parse_ms: v8.ms,
        ratio: v8.ms / best[source], read_alone_ms: readAlone[source], ratio_if_parse_were_free: readAlone[source] && v8.ms / readAlone[source],
      }));
    }
  } finally {
    await server.close();
  }
});
