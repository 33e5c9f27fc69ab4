// Benchmark (not a test): time from navigation to `idle()` on a large trace, each run in a fresh
// browser context (no HTTP or wasm code cache: a first visit), and what the page still waited for
// along the way. Skipped unless KINETOSCOPE_IDLE_URL names a trace the served site can fetch
// (e.g. a ~90 MB `kinetoscope-synth inflate` output linked under the dist directory; see
// docs/performance.md). Prints one JSON line per run: `loaded_ms` (navigation to the load's end),
// `timeline_ms` (to the first frame with tiles), `idle_ms` (to `idle()` resolving), and `waits`:
// per 250 ms sample after the load, which of the page's parts were pending.
const { test } = require('../pages/app');

const url = process.env.KINETOSCOPE_IDLE_URL;

test('navigation to idle on a large trace', async ({ browser, baseURL }) => {
  test.skip(!url, 'set KINETOSCOPE_IDLE_URL');
  test.setTimeout(20 * 60_000);
  const runs = Number(process.env.KINETOSCOPE_IDLE_RUNS || 3);
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, baseURL });
    const page = await context.newPage();
    const t0 = Date.now();
    await page.goto(`/?url=${encodeURIComponent(url)}`);
    await page.waitForFunction(() => window.kinetoscope && window.kinetoscope.loads >= 1, null, { polling: 50 });
    const loaded = Date.now() - t0;
    const idle = page.evaluate(() => window.kinetoscope.idle()).then(() => Date.now() - t0);
    let idleMs = null;
    idle.then((ms) => { idleMs = ms; });
    const waits = {};
    let timelineMs = null;
    while (idleMs === null && Date.now() - t0 < 15 * 60_000) {
      const s = await page.evaluate(() => {
        const k = window.kinetoscope;
        const pending = [];
        if (k.status === 'loading') pending.push('load');
        if (k.table && k.table.pending) pending.push('table');
        if (k.timeline && k.timeline.pending && k.timeline.pending.length) pending.push(`timeline:${k.timeline.pending}`);
        if (!k.findings) pending.push('findings');
        if (k.charts && k.charts.pending) pending.push('charts');
        if (k.explain && k.explain.pending) pending.push('explain');
        return { pending, painted: !!(k.timeline && k.timeline.firstPaintMs != null), rects: k.timeline ? k.timeline.rects : 0 };
      });
      if (timelineMs === null && s.painted && s.rects > 0) timelineMs = Date.now() - t0;
      const key = s.pending.join('+') || 'none-listed';
      waits[key] = (waits[key] || 0) + 1;
      await page.waitForTimeout(250);
    }
    await idle;
    const longTasks = await page.evaluate(() => window.kinetoscope.longTasks);
    console.log(JSON.stringify({
      bench: 'idle', file: url, run, loaded_ms: loaded, timeline_ms: timelineMs, idle_ms: idleMs, waits,
      long_tasks: { count: longTasks.count, max_ms: longTasks.maxMs },
    }));
    await context.close();
  }
});
