// Journey: open PyTorch's leaking transformer run (fixtures/torch-cpu-memory), open the Charts
// tab and read the memory chart: it stacks the categories (the hook's series, and the
// activation band's color on the canvas), lists the allocations live at the highest step peak
// exactly as `report --json` does (`memory[].peak_live`, `categories`, `steps`), hovering the
// chart lists another moment's, a header click sorts the list, and a row's click selects the op
// that made it on the timeline. State is read from `window.kinetoscope.charts.memoryChart`;
// waits are on `idle()` and polled pixels, never on sleeps.
const { test, expect } = require('../pages/app');
const { memoryFixture, cliReport } = require('../support/fixtures');

const LEAK = memoryFixture('transformer_leak.pt.trace.json');

/** Series color 3 (activation, `Category::ALL` order) in the light and dark palettes (app/src/charts/mod.rs). */
const ACTIVATION_RGB = ['142,78,198', '176,124,232'];

/** `window.kinetoscope.charts.memoryChart` as plain data. */
async function memoryChart(app) {
  return app.page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.charts.memoryChart)));
}

/** Opaque pixels of the memory canvas in one of `colors` ("r,g,b"). */
async function pixelsIn(app, colors) {
  return app.page.getByTestId('chart-memory').evaluate((canvas, want) => {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] === 255 && want.includes(`${data[i]},${data[i + 1]},${data[i + 2]}`)) n++;
    }
    return n;
  }, colors);
}

test('memory chart: categories stacked, the peak\'s live allocations equal report --json, hover, sort, a row selects its op', async ({ app }) => {
  await app.open();
  await app.upload(LEAK);
  await app.openTab('charts');
  await app.idle();
  const report = cliReport(LEAK);
  const cpu = report.memory.find((m) => m.device === 'cpu');
  expect(cpu, 'cpu in memory[]').toBeTruthy();
  const m = await memoryChart(app);
  const series = Object.fromEntries(m.categories.map((c) => [c.name, c.values]));

  // The device and its curves, each step's peak as the CLI reports it.
  expect(m.device).toBe('cpu');
  expect(m.devices.map((d) => d.label)).toEqual(report.memory.map((d) => d.device));
  expect(m.devices[0].peakAllocated).toBe(cpu.peak_allocated_bytes);
  expect(Math.max(...m.allocated.filter((v) => v !== null))).toBe(cpu.peak_allocated_bytes);
  expect(m.steps.map((s) => [s.step, s.peakBytes])).toEqual(cpu.steps.map((s) => [s.step, s.peak_bytes]));

  // Categories: PyTorch's eight, bounded by the buckets asked for; every category holding bytes
  // at the peak (report's `categories`) has a band; the live total at the peak is theirs.
  expect(m.categories.map((c) => c.name)).toEqual(['parameter', 'optimizer_state', 'gradient', 'activation', 'temporary', 'input', 'autograd_detail', 'unknown']);
  for (const values of Object.values(series)) expect(values.length).toBe(m.allocated.length);
  expect(m.allocated.length).toBeLessThanOrEqual(300);
  for (const [name, bytes] of Object.entries(cpu.categories)) {
    if (bytes > 0) expect(Math.max(...series[name]), `${name} has a band`).toBeGreaterThan(0);
  }
  const atPeak = Object.values(cpu.categories).reduce((a, b) => a + b, 0);
  expect(m.live.bytes).toBe(atPeak);
  const bucket = Math.floor((m.live.atNs - m.startNs) / m.bucketNs);
  const stacked = Object.values(series).reduce((a, v) => a + v[bucket], 0);
  expect(stacked, 'the bucket holding the peak stacks at least the peak\'s live bytes').toBeGreaterThanOrEqual(atPeak);
  await expect.poll(() => pixelsIn(app, ACTIVATION_RGB), 'the activation band is drawn').toBeGreaterThan(200);

  // The live list at the highest step peak is report's peak_live, in its order.
  const highest = cpu.steps.reduce((a, s) => (s.peak_bytes > a.peak_bytes ? s : a));
  expect(m.live.hovered).toBe(false);
  expect(m.live.atNs / 1e3).toBeCloseTo(highest.peak_at_us, 3);
  expect(m.live.rows.length).toBe(cpu.peak_live.length);
  cpu.peak_live.forEach((want, i) => {
    const row = m.live.rows[i];
    expect([row.bytes, row.category, row.op ?? '-'], `row ${i}`).toEqual([want.bytes, want.category, want.op]);
    expect(row.atNs / 1e3).toBeCloseTo(want.at_us, 3);
    if (want.freed_at_us === null) expect(row.freedNs).toBeNull();
    else expect(row.freedNs / 1e3).toBeCloseTo(want.freed_at_us, 3);
  });
  const rows = app.page.getByTestId('memory-live-row');
  await expect(rows).toHaveCount(cpu.peak_live.length);
  await expect(app.page.getByTestId('memory-live')).toHaveAttribute('data-bytes', String(atPeak));
  await app.screenshot('memory-chart-peak');

  // Sorting: by age, oldest first, then youngest first.
  const ages = async () => (await memoryChart(app)).live.rows.map((r) => m.live.atNs - r.atNs);
  await app.page.getByTestId('live-col-age').click();
  const down = await ages();
  expect(down).toEqual([...down].sort((a, b) => b - a));
  await app.page.getByTestId('live-col-age').click();
  const up = await ages();
  expect(up).toEqual([...up].sort((a, b) => a - b));
  await expect(app.page.getByTestId('live-col-age')).toHaveAttribute('aria-sort', 'ascending');

  // Hover: another moment's live set, every row made before it and freed after it.
  const canvas = app.page.getByTestId('chart-memory');
  const box = await canvas.boundingBox();
  await canvas.hover({ position: { x: box.width * 0.3, y: box.height / 2 } });
  await app.idle();
  const hovered = (await memoryChart(app)).live;
  expect(hovered.hovered).toBe(true);
  expect(hovered.atNs).not.toBe(m.live.atNs);
  for (const r of hovered.rows) {
    expect(r.atNs).toBeLessThanOrEqual(hovered.atNs);
    if (r.freedNs !== null) expect(r.freedNs).toBeGreaterThan(hovered.atNs);
  }
  await app.page.getByTestId('memory-peak').click();
  await app.idle();
  expect((await memoryChart(app)).live.atNs).toBe(m.live.atNs);

  // A row's click selects the op that made it.
  const withOp = m.live.rows.find((r) => r.opId !== null);
  expect(withOp, 'a live allocation made in an op').toBeTruthy();
  await app.page.locator(`[data-testid="memory-live-row"][data-op="${withOp.opId}"]`).first().click();
  await app.idle();
  const selection = await app.page.evaluate(() => window.kinetoscope.timeline.selection);
  expect(selection && selection.id).toBe(withOp.opId);
  expect(selection.name).toBe(withOp.op);
  await app.screenshot('memory-row-selects-op');
});
