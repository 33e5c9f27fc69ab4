// Journey: load a trace, open the Charts tab, check every chart against the tables the worker
// computes (one step bar per Steps row; the histogram counts every launch of the kernel the
// Kernels table puts on top), check the canvases hold a picture, switch the kernel, the theme and
// the window size, and save screenshots. The values behind the charts (step parts, GPU and memory
// series, histogram bins and median) and the timeline's counter tracks equal `report --json` on the
// demo and recounts from its JSON, read through the hook and from the canvas pixels where they are
// drawn (step bar heights, counter track areas column by column, histogram bars and median
// marker). State is read from `window.kinetoscope.charts` / `.timeline`; waits are on `idle()`
// (chart queries included) and on polled pixels, never on sleeps.
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

// ---- the pixels where the values are drawn ------------------------------------------------------

/**
 * Counter tracks as painted on the timeline canvas: per track (its `counter-label`), the filled
 * area's height in each canvas column, in px, decoded from the pixel colors, plus what the
 * decoding needs to say about the picture. Light theme (app/src/timeline/theme.rs `LIGHT`): the
 * area is `counter` rgba(40,130,90,0.55) over the `#ffffff` background; a step line
 * (`step` rgba(40,90,200,0.35), one full column, drawn after the areas) may cross a column. A
 * pixel's coverage f of the area (0..1, antialiased edges included) is read from how far it
 * moved from the column's empty color (its top row: the area stays 4 px below the track top)
 * toward the full color; a column's height is the sum of f down the track. A column whose top
 * pixel is neither the background nor a step line over it is `foreign` (something else drawn).
 */
async function drawnCounterTracks(app) {
  return app.page.evaluate(() => {
    const canvas = document.querySelector('[data-testid="timeline-canvas"]');
    const scale = canvas.width / canvas.clientWidth;
    const t = window.kinetoscope.timeline;
    const { data, width } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const bg = [255, 255, 255];
    const area = [40, 130, 90, 0.55];
    const step = [40, 90, 200, 0.35];
    const over = (c, under) => [0, 1, 2].map((k) => c[3] * c[k] + (1 - c[3]) * under[k]);
    const stepOverBg = over(step, bg);
    const near = (a, b) => [0, 1, 2].every((k) => Math.abs(a[k] - b[k]) <= 1.5);
    const px = (x, y) => { const i = (y * width + x) * 4; return [data[i], data[i + 1], data[i + 2]]; };
    return [...document.querySelectorAll('[data-testid="counter-label"]')].map((label) => {
      const top = Math.round((t.rulerH + parseFloat(label.style.top) - t.scrollY) * scale);
      const height = Math.round(parseFloat(label.style.height) * scale);
      const heights = [];
      const stepColumns = [];
      const foreign = [];
      for (let x = 0; x < width; x++) {
        const empty = px(x, top + 1);
        let full;
        if (near(empty, bg)) full = over(area, bg);
        else if (near(empty, stepOverBg)) {
          full = over(step, over(area, bg));
          stepColumns.push(x);
        } else {
          foreign.push(x);
          heights.push(null);
          continue;
        }
        const span = [0, 1, 2].reduce((s, k) => s + empty[k] - full[k], 0);
        let h = 0;
        for (let y = top; y < top + height; y++) {
          const p = px(x, y);
          h += [0, 1, 2].reduce((s, k) => s + empty[k] - p[k], 0) / span;
        }
        heights.push(h);
      }
      return { label: label.textContent.trim(), top, height, heights, stepColumns, foreign, scale };
    });
  });
}

/** Drawn value of a column: the area's full scale is the track height minus 6 px (draw_list.rs
 * `counter`: the base 2 px above the track bottom, the series maximum 4 px below its top). */
const drawnValue = (track, x, max) => (track.heights[x] / (track.height - 6 * track.scale)) * max;

/** Mean of the drawn values over [w0, w1) ns, each column weighted by its overlap. */
function drawnMean(track, view, w0, w1, max) {
  const x0 = ((w0 - view.startNs) / view.nsPerPx) * track.scale;
  const x1 = ((w1 - view.startNs) / view.nsPerPx) * track.scale;
  let sum = 0;
  for (let x = Math.floor(x0); x < Math.ceil(x1); x++) {
    const overlap = Math.min(x + 1, x1) - Math.max(x, x0);
    sum += drawnValue(track, x, max) * overlap;
  }
  return sum / (x1 - x0);
}

test('counter tracks as drawn: mean GPU utilization and SM efficiency equal gpus[], memory equals memory[] and the trace JSON, column by column', async ({ app }) => {
  await app.open();
  await app.idle();
  await expect.poll(async () => app.page.evaluate(() => window.kinetoscope.timeline?.counterSeries != null), 'counter tracks answered').toBe(true);
  await app.idle();
  const view = await app.page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.timeline)));
  const set = view.counterSeries;
  const report = cliReport(DEMO);
  const events = demoEvents();
  const tracks = await drawnCounterTracks(app);
  expect(tracks.map((t) => t.label).sort()).toEqual(set.series.map((s) => s.label).sort());
  // The whole view is the timeline's own picture: nothing but areas and step lines in the tracks.
  for (const t of tracks) expect(t.foreign, `${t.label}: columns with something else drawn`).toEqual([]);
  // One step line per ProfilerStep crosses every track.
  const stepCount = events.filter((e) => e.ph === 'X' && e.cat === 'user_annotation' && /^ProfilerStep#\d+$/.test(e.name)).length;
  for (const t of tracks) expect(t.stepColumns.length, `${t.label}: step lines`).toBe(stepCount);
  // Buckets of half a pixel or more are drawn one by one (draw_list.rs `counter` folds buckets
  // into a column's peak only when two fit in one pixel).
  expect(set.bucketNs / view.nsPerPx).toBeGreaterThanOrEqual(0.5);

  // Utilization and SM efficiency (series maximum 1): the drawn area averaged over the report's
  // window W equals gpus[]. Allowed: the series' own slack, W's edges falling inside two
  // buckets (2 buckets over W: 0.32 points here), plus 0.05 points for reading antialiased
  // pixels back (8-bit colors: a pixel's coverage to 1/277).
  const byLabel = Object.fromEntries(tracks.map((t) => [t.label, t]));
  for (const gpu of report.gpus) {
    const w0 = gpu.window_start_us * 1e3;
    const w1 = gpu.window_end_us * 1e3;
    const slack = (200 * set.bucketNs) / (w1 - w0) + 0.05;
    for (const [metric, pct] of [['utilization', gpu.utilization_pct], ['sm_efficiency', gpu.sm_efficiency_pct]]) {
      const s = set.series.find((x) => x.device === gpu.device && x.metric === metric);
      expect(s.max).toBe(1);
      const mean = drawnMean(byLabel[s.label], view, w0, w1, 1) * 100;
      expect(Math.abs(mean - pct), `${s.label}: drawn mean ${mean}% vs gpus[] ${pct}%`).toBeLessThanOrEqual(slack);
      // The picture holds the series it was drawn from: the drawn mean is the series' mean
      // within 0.05 points (0.012 px of the 24 px scale on average; measured 0.02).
      expect(Math.abs(mean - meanOver(set, s, w0, w1) * 100), `${s.label}: drawn vs its series`).toBeLessThanOrEqual(0.05);
    }
  }

  // Column by column, against the trace JSON itself: each bucket's kernel union (utilization)
  // and peak `Total Allocated` (memory, scaled to memory[].peak_allocated_bytes), recounted
  // here; a column shows the buckets it overlaps, each by its share of the column (the area's
  // vertical edges fall inside columns and are antialiased). Time 0 of the page is placed by
  // W's start, the first ProfilerStep#N's start in the JSON.
  const annotations = events
    .filter((e) => e.ph === 'X' && e.cat === 'user_annotation' && /^ProfilerStep#\d+$/.test(e.name))
    .sort((a, b) => a.ts - b.ts);
  const originUs = annotations[0].ts - report.gpus[0].window_start_us;
  const atNs = (us) => (us - originUs) * 1e3;
  const kernels = events.filter((e) => e.ph === 'X' && e.cat === 'kernel');
  const buckets = set.series[0].values.length;
  /** The drawn value column x should show, from per-bucket values `v(i)`. */
  const mixed = (track, x, v) => {
    const a = view.startNs + (x / track.scale) * view.nsPerPx;
    const b = view.startNs + ((x + 1) / track.scale) * view.nsPerPx;
    let sum = 0;
    for (let i = Math.max(0, Math.floor((a - set.startNs) / set.bucketNs)); i < buckets; i++) {
      const b0 = set.startNs + i * set.bucketNs;
      if (b0 >= b) break;
      sum += v(i) * (Math.min(b, b0 + set.bucketNs) - Math.max(a, b0));
    }
    return sum / (b - a);
  };
  /** Largest |drawn - expected| over the columns the series covers, px of the 24 px scale. */
  const worst = (track, max, v) => {
    const x0 = Math.ceil(((set.startNs - view.startNs) / view.nsPerPx) * track.scale);
    const x1 = Math.floor(((set.startNs + buckets * set.bucketNs - view.startNs) / view.nsPerPx) * track.scale);
    let w = { px: 0, x: null };
    for (let x = Math.max(0, x0); x < Math.min(x1, track.heights.length); x++) {
      const px = (Math.abs(drawnValue(track, x, max) - mixed(track, x, v)) / max) * (track.height - 6 * track.scale);
      if (px > w.px) w = { px, x };
    }
    return w;
  };
  // Allowed per column: 0.5 px. Canvas antialiasing approximates a partly covered pixel's
  // area, and every column here holds a bucket edge (buckets are 0.999 px wide); measured
  // worst 0.20 px (utilization), 0.24 (cuda:0 memory), 0.31 (cpu memory). A bucket off by one,
  // or a wrong scale (the 6 px margin), is off by whole pixels.
  const errors = {};
  for (const gpu of report.gpus) {
    const s = set.series.find((x) => x.device === gpu.device && x.metric === 'utilization');
    const own = kernels.filter((k) => k.args.device === gpu.device).map((k) => [atNs(k.ts), atNs(k.ts + k.dur)]);
    const util = (i) => unionIn(own, set.startNs + i * set.bucketNs, set.startNs + (i + 1) * set.bucketNs) / set.bucketNs;
    errors[s.label] = worst(byLabel[s.label], 1, util);
  }
  for (const m of report.memory) {
    const s = set.series.find((x) => x.metric === 'memory' && x.label === `${m.device} allocated`);
    const samples = events
      .filter((e) => e.name === '[memory]' && (e.args['Device Type'] === 0 ? 'cpu' : `cuda:${e.args['Device Id']}`) === m.device)
      .map((e) => [atNs(e.ts), e.args['Total Allocated']])
      .sort((p, q) => p[0] - q[0]);
    const peak = (i) => {
      const b0 = set.startNs + i * set.bucketNs;
      const before = samples.filter(([ts]) => ts < b0);
      const during = samples.filter(([ts]) => ts >= b0 && ts < b0 + set.bucketNs).map(([, v]) => v);
      const values = before.length ? [before[before.length - 1][1], ...during] : during;
      return values.length ? Math.max(...values) : 0;
    };
    errors[s.label] = worst(byLabel[s.label], m.peak_allocated_bytes, peak);
  }
  for (const [label, w] of Object.entries(errors)) {
    expect(w.px, `${label}: worst column ${w.x} off by ${w.px} px`).toBeLessThanOrEqual(0.5);
  }
  await app.screenshot('counter-tracks-drawn');
});

/** The kernel histogram as drawn: its bars (runs of columns in series color 0, left to right,
 * device px; bars of adjacent bins are 1 px apart, app/src/charts/histogram.rs) and the median
 * marker (series color 4, a 2 px line over the plot's height): the columns it fills. */
async function drawnHistogram(app) {
  return app.page.getByTestId('chart-kernel-hist').evaluate((canvas, [bar, marker]) => {
    const { data, width, height } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const is = (x, y, rgb) => {
      const i = (y * width + x) * 4;
      return data[i + 3] === 255 && `${data[i]},${data[i + 1]},${data[i + 2]}` === rgb;
    };
    const barColumns = [];
    const markerRows = [];
    for (let x = 0; x < width; x++) {
      let b = 0;
      let m = 0;
      for (let y = 0; y < height; y++) {
        if (is(x, y, bar)) b++;
        else if (is(x, y, marker)) m++;
      }
      barColumns.push(b > 0);
      markerRows.push(m);
    }
    const bars = [];
    for (let x = 0; x < width; x++) {
      if (!barColumns[x]) continue;
      const left = x;
      while (x < width && barColumns[x]) x++;
      bars.push({ left, right: x - 1 });
    }
    const tallest = Math.max(...markerRows);
    const marked = markerRows.flatMap((n, x) => (n > tallest / 2 ? [x] : []));
    return { bars, marked, tallest, height };
  }, [SERIES[0], SERIES[4]]);
}

test('histogram as drawn: one bar per non-empty bin recounted from the JSON, the median marker at kernels[].median_us', async ({ app }) => {
  await app.open();
  await app.openTab('charts');
  await app.idle();
  const c = await charts(app);
  const h = c.histogram;
  const row = cliReport(DEMO).kernels.find((k) => k.name === h.name);
  // Bins recounted from the kernel's durations in the JSON (as the chart values test does).
  const durs = demoEvents().filter((e) => e.ph === 'X' && e.cat === 'kernel' && e.name === h.name)
    .map((e) => Math.round(e.dur * 1e3)).sort((a, b) => a - b);
  const bins = h.counts.length;
  const min = durs[0];
  const width = Math.floor((durs[durs.length - 1] - min) / bins) + 1;
  const counts = new Array(bins).fill(0);
  for (const d of durs) counts[Math.min(Math.floor((d - min) / width), bins - 1)] += 1;
  const filled = counts.flatMap((n, i) => (n > 0 ? [i] : []));

  await expect.poll(async () => (await drawnHistogram(app)).bars.length, 'one bar per non-empty bin').toBe(filled.length);
  const drawn = await drawnHistogram(app);
  // Each bar's left edge is where its bin starts: a straight line through the bin starts, fitted
  // by least squares, places every edge within 1 px (plotters floors coordinates to whole
  // pixels; measured worst 0.94 px on the demo).
  const xs = filled.map((i) => min + i * width);
  const ys = drawn.bars.map((b) => b.left);
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  const pxPerNs = xs.reduce((a, x, k) => a + (x - mx) * (ys[k] - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
  const at = (ns) => my + (ns - mx) * pxPerNs;
  ys.forEach((y, k) => expect(Math.abs(y - at(xs[k])), `bin ${filled[k]}'s bar edge`).toBeLessThanOrEqual(1));
  expect(width * pxPerNs, 'a bin is several pixels wide').toBeGreaterThan(4);

  // The marker: a 2 px line (two full columns, x - 1 and x, around the median's pixel x) over
  // most of the plot's height. Its pixel, read back through the fitted line, is the report's
  // median within 1 px, the bound the bar edges meet (1 px = 29 ns of 152,880 here; measured
  // 4 ns). The bin it falls in is not asserted: the median is 2 ns past a bin edge.
  expect(drawn.marked.length).toBe(2);
  expect(drawn.marked[1] - drawn.marked[0]).toBe(1);
  expect(drawn.tallest).toBeGreaterThan(drawn.height / 2);
  const medianNs = mx + (drawn.marked[1] - my) / pxPerNs;
  const tolNs = 1 / pxPerNs;
  expect(Math.abs(medianNs - row.median_us * 1e3), `median ${medianNs} ns as drawn vs ${row.median_us} µs (1 px = ${tolNs.toFixed(1)} ns)`).toBeLessThanOrEqual(tolNs);
  await app.screenshot('charts-histogram-drawn');
});
