// Journey: load a trace, open the Charts tab, check every chart against the tables the worker
// computes (one step bar per Steps row; the histogram counts every launch of the kernel the
// Kernels table puts on top), check the canvases hold a picture, switch the kernel, the theme and
// the window size, and save screenshots. The values behind the charts (step parts, GPU and memory
// series, histogram bins and median) and the timeline's counter tracks equal `report --json` on the
// demo and recounts from its JSON. State is read from `window.kinetoscope.charts` / `.timeline`;
// waits are on `idle()` (chart queries included) and on polled pixels, never on sleeps.
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const { test, expect } = require('../pages/app');
const { realFixture, cliReport } = require('../support/fixtures');

/** The built-in demo trace the page opens without `?url=`. */
const DEMO = path.join(__dirname, '../../public/demo.pt.trace.json.gz');

const CANVASES = ['chart-steps', 'chart-gpu', 'chart-memory', 'chart-kernel-hist'];

/** `window.kinetoscope.charts` as plain data (null off the charts tab). */
async function charts(app) {
  return app.page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.charts)));
}

/** Distinct colors among a grid of sampled pixels of canvas `testId`, and its top-left color. */
async function pixels(app, testId) {
  return app.page.getByTestId(testId).evaluate((canvas) => {
    const ctx = canvas.getContext('2d');
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    const colors = new Set();
    const step = 7;
    for (let y = 0; y < canvas.height; y += step) {
      for (let x = 0; x < canvas.width; x += step) {
        const i = (y * canvas.width + x) * 4;
        colors.add(`${data[i]},${data[i + 1]},${data[i + 2]},${data[i + 3]}`);
      }
    }
    return { distinct: colors.size, corner: Array.from(data.slice(0, 4)).join(','), width: canvas.width };
  });
}

/** Kernel table rows as [{name, calls, total}], in the table's order (total, descending). */
async function kernelRows(app) {
  await app.openTab('kernels');
  await expect(app.page.getByTestId('kernel-table')).toBeVisible();
  const names = await app.column('kernel-row', 'name');
  const calls = await app.column('kernel-row', 'calls');
  const totals = await app.column('kernel-row', 'total');
  return names.map((name, i) => ({ name, calls: calls[i], total: totals[i] }));
}

/** Checks the charts of the loaded trace against its Steps and Kernels tables; returns the kernels. */
async function checkCharts(app) {
  await app.openTab('steps');
  await expect(app.page.getByTestId('step-table')).toBeVisible();
  const stepRows = await app.page.getByTestId('step-row').count();
  const kernels = await kernelRows(app);
  expect(kernels.length).toBeGreaterThan(0);

  await app.openTab('charts');
  await expect(app.page.getByTestId('charts')).toBeVisible();
  const c = await charts(app);
  expect(c.pending).toBe(false);
  expect(c.steps).toBe(stepRows);
  expect(c.gpu).toBeGreaterThan(0);
  // The default kernel is the one with the most total time; it counts every launch.
  const top = Math.max(...kernels.map((k) => k.total));
  const shown = kernels.find((k) => k.name === c.histogram.name);
  expect(shown, `histogram kernel ${c.histogram.name} is in the kernel table`).toBeTruthy();
  expect(shown.total).toBe(top);
  expect(c.histogram.total).toBe(shown.calls);
  await expect(app.page.getByTestId('chart-kernel-select')).toHaveValue(shown.name);

  for (const id of CANVASES) {
    await expect(app.page.getByTestId(id)).toBeVisible();
    await expect.poll(async () => (await pixels(app, id)).distinct, `${id} is not blank`).toBeGreaterThan(2);
  }
  return kernels;
}

test('charts of the demo: step bars, GPU, memory, kernel histogram; kernel, theme and resize redraw', async ({ app }) => {
  await app.open();
  const kernels = await checkCharts(app);
  await app.screenshot('charts-demo');

  // Another kernel: its histogram counts its launches.
  const first = (await charts(app)).histogram.name;
  const other = kernels.find((k) => k.name !== first);
  if (other) {
    await app.page.getByTestId('chart-kernel-select').selectOption(other.name);
    await app.idle();
    const c = await charts(app);
    expect(c.histogram).toMatchObject({ name: other.name, total: other.calls });
  }

  // Theme: every chart repaints its background.
  const before = await pixels(app, 'chart-steps');
  await app.page.getByTestId('theme-toggle').click();
  for (const id of CANVASES) {
    await expect.poll(async () => (await pixels(app, id)).corner, `${id} follows the theme`).not.toBe(before.corner);
  }
  await app.screenshot('charts-demo-theme');

  // Resize: the bitmaps follow their boxes.
  await app.page.setViewportSize({ width: 900, height: 800 });
  for (const id of CANVASES) {
    const box = app.page.getByTestId(id);
    await expect.poll(async () => (await pixels(app, id)).width, `${id} redrawn at its new width`)
      .toBe(await box.evaluate((el) => el.clientWidth));
  }
  expect((await charts(app)).steps).toBeGreaterThan(0);

  // Off the charts tab the contract says null.
  await app.openTab('summary');
  expect(await charts(app)).toBeNull();
});

test('charts of a real GPU trace match its tables', async ({ app }) => {
  await app.open();
  await app.upload(realFixture('partx__profiler_trace_single_sample.json'));
  await checkCharts(app);
  await app.screenshot('charts-partx');
});

/** Series colors of both themes (app/src/charts/mod.rs `Palette`), as "r,g,b". */
const SERIES = [
  '2f6fde', 'f08c2e', 'd4b106', '8e4ec6', 'd93f3f', '2e9e5b', '1c9aa8', '98a2b3',
  '5b8ff0', 'f5a255', 'e8c83a', 'b07ce8', 'f97066', '4cc37e', '3cc2cf', '7a8496',
].map((h) => [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)).join(','));

/** Bars of the step chart as drawn: runs of columns holding series-colored pixels, left to
 * right (the legend column at the right is left out), each with its height in pixels. */
async function drawnBars(app) {
  return app.page.getByTestId('chart-steps').evaluate((canvas, series) => {
    const legend = 170 * window.devicePixelRatio;
    const { data, width, height } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const colored = new Set(series);
    const heights = [];
    for (let x = 0; x < width - legend; x++) {
      let n = 0;
      for (let y = 0; y < height; y++) {
        const i = (y * width + x) * 4;
        if (data[i + 3] === 255 && colored.has(`${data[i]},${data[i + 1]},${data[i + 2]}`)) n++;
      }
      heights.push(n);
    }
    const bars = [];
    for (let x = 0; x < heights.length; x++) {
      if (heights[x] === 0) continue;
      const start = x;
      let top = 0;
      while (x < heights.length && heights[x] > 0) top = Math.max(top, heights[x++]);
      bars.push({ x: start, width: x - start, height: top });
    }
    return bars;
  }, SERIES);
}

test('step bars as drawn: each bar over the tallest equals its step over the longest, from the trace JSON', async ({ app }) => {
  await app.open();
  await app.openTab('charts');
  await app.idle();
  await expect.poll(async () => (await drawnBars(app)).length, 'the demo\'s 5 step bars drawn').toBe(5);
  // The demo's host ProfilerStep#N annotations, read from the file itself, in step order.
  const events = JSON.parse(zlib.gunzipSync(fs.readFileSync(DEMO)).toString('utf8')).traceEvents;
  const steps = events
    .filter((e) => e.ph === 'X' && e.cat === 'user_annotation' && /^ProfilerStep#\d+$/.test(e.name))
    .map((e) => ({ n: Number(e.name.slice(13)), dur: e.dur }))
    .sort((a, b) => a.n - b.n);
  expect(steps.length).toBe(5);
  const bars = await drawnBars(app);
  const tallest = Math.max(...bars.map((b) => b.height));
  const longest = Math.max(...steps.map((s) => s.dur));
  expect(tallest).toBeGreaterThan(100);
  for (let i = 0; i < steps.length; i++) {
    // Within 2 px of the bar the step's share of the longest step would have.
    expect(Math.abs(bars[i].height - (tallest * steps[i].dur) / longest), `step ${steps[i].n}`).toBeLessThanOrEqual(2);
  }
  // The histogram's default kernel: its launches, counted in the trace JSON.
  const c = await charts(app);
  const launches = events.filter((e) => e.ph === 'X' && e.cat === 'kernel' && e.name === c.histogram.name).length;
  expect(c.histogram.total).toBe(launches);
  await app.screenshot('charts-step-bars');
});

/** The demo's trace events, gunzipped and parsed here (not by the engine). */
function demoEvents() {
  return JSON.parse(zlib.gunzipSync(fs.readFileSync(DEMO)).toString('utf8')).traceEvents;
}

/** Length of the union of `intervals` ([a, b] pairs) clipped to [w0, w1]. */
function unionIn(intervals, w0, w1) {
  const clipped = intervals
    .map(([a, b]) => [Math.max(a, w0), Math.min(b, w1)])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let busy = 0;
  let cur = null;
  for (const [a, b] of clipped) {
    if (cur && a <= cur[1]) cur[1] = Math.max(cur[1], b);
    else {
      if (cur) busy += cur[1] - cur[0];
      cur = [a, b];
    }
  }
  return cur ? busy + cur[1] - cur[0] : busy;
}

/** Mean of a counter series over [w0, w1) ns, each bucket weighted by its overlap with it. */
function meanOver(set, series, w0, w1) {
  let sum = 0;
  series.values.forEach((v, i) => {
    const a = set.startNs + i * set.bucketNs;
    const overlap = Math.min(a + set.bucketNs, w1) - Math.max(a, w0);
    if (overlap > 0 && v !== null) sum += v * overlap;
  });
  return sum / (w1 - w0);
}

/** Largest `Total Allocated` of the demo's `[memory]` events per device ("cpu", "cuda:N"). */
function memoryPeaks(events) {
  const peaks = {};
  for (const e of events.filter((x) => x.name === '[memory]')) {
    const a = e.args;
    const device = a['Device Type'] === 0 ? 'cpu' : `cuda:${a['Device Id']}`;
    peaks[device] = Math.max(peaks[device] ?? 0, a['Total Allocated']);
  }
  return peaks;
}

/**
 * The counter set's GPU and memory series against `report --json`: each utilization and SM
 * efficiency series averaged over the report's window W equals `gpus[]` within the share of W
 * two buckets cover (the window's edges fall inside buckets), each memory series' peak equals
 * `memory[]`'s and the trace's own `[memory]` events'.
 */
function expectCounters(set, report, events, what) {
  expect(set, `${what}: counters`).not.toBeNull();
  for (const gpu of report.gpus) {
    const w0 = gpu.window_start_us * 1e3;
    const w1 = gpu.window_end_us * 1e3;
    const slack = (200 * set.bucketNs) / (w1 - w0);
    for (const [metric, pct] of [['utilization', gpu.utilization_pct], ['sm_efficiency', gpu.sm_efficiency_pct]]) {
      const s = set.series.find((x) => x.device === gpu.device && x.metric === metric);
      expect(s, `${what}: GPU ${gpu.device} ${metric} series`).toBeTruthy();
      const mean = meanOver(set, s, w0, w1) * 100;
      expect(Math.abs(mean - pct), `${what}: GPU ${gpu.device} mean ${metric} ${mean} vs ${pct}`).toBeLessThanOrEqual(slack);
    }
  }
  const peaks = memoryPeaks(events);
  for (const m of report.memory) {
    const s = set.series.find((x) => x.metric === 'memory' && x.label === `${m.device} allocated`);
    expect(s, `${what}: ${m.device} memory series`).toBeTruthy();
    expect(s.max, `${what}: ${m.device} peak`).toBe(m.peak_allocated_bytes);
    expect(Math.max(...s.values.filter((v) => v !== null)), `${what}: ${m.device} tallest bucket`).toBe(m.peak_allocated_bytes);
    expect(m.peak_allocated_bytes, `${what}: ${m.device} peak in the trace JSON`).toBe(peaks[m.device]);
  }
}

test('chart values equal report --json: step parts, mean GPU utilization, memory peaks, histogram bins and median; recounted from the trace JSON', async ({ app }) => {
  await app.open();
  await app.openTab('charts');
  await app.idle();
  const c = await charts(app);
  const report = cliReport(DEMO);
  const events = demoEvents();

  // Step bars: each part equals steps[].breakdown (µs; the bars hold whole ns); the parts add up
  // to the ProfilerStep#N annotation's duration and the kernel part is the union of the kernels
  // inside it, both read from the JSON here.
  const annotations = events
    .filter((e) => e.ph === 'X' && e.cat === 'user_annotation' && /^ProfilerStep#\d+$/.test(e.name))
    .sort((a, b) => a.ts - b.ts);
  const kernels = events.filter((e) => e.ph === 'X' && e.cat === 'kernel');
  expect(c.stepBars.length).toBe(report.steps.length);
  expect(report.steps.length).toBe(5);
  report.steps.forEach((step, i) => {
    const bar = c.stepBars[i];
    expect(`ProfilerStep#${bar.step}`).toBe(step.name);
    // A part the steps table leaves out is 0 in the JSON.
    for (const key of Object.keys(bar.parts)) expect(step.breakdown, `${step.name} ${key}`).toHaveProperty(key);
    for (const [key, us] of Object.entries(step.breakdown)) {
      expect(Math.abs((bar.parts[key] ?? 0) / 1e3 - us), `${step.name} ${key}`).toBeLessThanOrEqual(0.001);
    }
    const e = annotations[i];
    expect(e.name).toBe(step.name);
    const sum = Object.values(bar.parts).reduce((a, b) => a + b, 0);
    expect(Math.abs(sum / 1e3 - e.dur), `${step.name} parts add up to its span`).toBeLessThanOrEqual(0.01);
    const busy = unionIn(kernels.map((k) => [k.ts, k.ts + k.dur]), e.ts, e.ts + e.dur);
    expect(Math.abs(bar.parts.kernel / 1e3 - busy), `${step.name} kernel part`).toBeLessThanOrEqual(0.01);
  });

  // GPU utilization and memory: gpus[] and memory[]; utilization also recounted from the JSON
  // (docs/definitions.md §3: kernels' union over W = first step start to last step end).
  expectCounters(c.counters, report, events, 'charts');
  const w0 = annotations[0].ts;
  const w1 = Math.max(...annotations.map((e) => e.ts + e.dur));
  for (const gpu of report.gpus) {
    const own = kernels.filter((k) => k.args.device === gpu.device).map((k) => [k.ts, k.ts + k.dur]);
    expect(gpu.utilization_pct).toBeCloseTo((100 * unionIn(own, w0, w1)) / (w1 - w0), 3);
  }
  expect(c.counters.series.filter((s) => s.metric !== 'memory').length).toBe(c.gpu);
  expect(c.counters.series.filter((s) => s.metric === 'memory').length).toBe(c.memory);

  // Histogram of the top kernel: median and launches equal kernels[]; the bins are recounted
  // from its durations in the JSON (equal-width bins from the shortest, as many as drawn).
  const h = c.histogram;
  const row = report.kernels.find((k) => k.name === h.name);
  expect(row, `${h.name} in kernels[]`).toBeTruthy();
  expect(h.total).toBe(row.calls);
  expect(Math.abs(h.medianNs / 1e3 - row.median_us)).toBeLessThanOrEqual(0.001);
  const durs = kernels.filter((k) => k.name === h.name).map((k) => Math.round(k.dur * 1e3)).sort((a, b) => a - b);
  expect(durs.length).toBe(h.total);
  expect([h.minNs, h.maxNs, h.medianNs]).toEqual([durs[0], durs[durs.length - 1], durs[Math.floor(durs.length / 2)]]);
  const bins = h.counts.length;
  expect(bins).toBe(40);
  const width = Math.floor((h.maxNs - h.minNs) / bins) + 1;
  expect(h.widthNs).toBe(width);
  const counts = new Array(bins).fill(0);
  for (const d of durs) counts[Math.min(Math.floor((d - h.minNs) / width), bins - 1)] += 1;
  expect(h.counts).toEqual(counts);
});

test('timeline counter tracks equal report --json gpus[] and memory[]', async ({ app }) => {
  await app.open();
  await app.idle();
  await expect.poll(async () => app.page.evaluate(() => window.kinetoscope.timeline?.counterSeries != null), 'counter tracks answered').toBe(true);
  await app.idle();
  const t = await app.page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.timeline)));
  const report = cliReport(DEMO);
  // The whole trace is in view: the tracks cover W, so their means are comparable.
  const set = t.counterSeries;
  expect(set.startNs).toBeLessThanOrEqual(report.gpus[0].window_start_us * 1e3);
  expect(set.startNs + set.bucketNs * set.series[0].values.length).toBeGreaterThanOrEqual(report.gpus[0].window_end_us * 1e3 - set.bucketNs);
  // Every series is drawn as a track (labels in the lane list, in group order).
  expect([...t.counters].sort()).toEqual(set.series.map((s) => s.label).sort());
  expectCounters(set, report, demoEvents(), 'timeline');
});
