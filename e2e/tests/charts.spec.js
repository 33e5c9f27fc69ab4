// Journey: load a trace, open the Charts tab, check every chart against the tables the worker
// computes (one step bar per Steps row; the histogram counts every launch of the kernel the
// Kernels table puts on top), check the canvases hold a picture, switch the kernel, the theme and
// the window size, and save screenshots. State is read from `window.kinetoscope.charts`; waits are
// on `idle()` (chart queries included) and on polled pixels, never on sleeps.
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const { test, expect } = require('../pages/app');
const { realFixture } = require('../support/fixtures');

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
    expect(c.histogram).toEqual({ name: other.name, total: other.calls });
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
