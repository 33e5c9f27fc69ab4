// Journey: is a kernel slow for its work? On the H100 bert trace the kernel table's roofline
// columns (FLOPs, TFLOP/s, % of peak, GB/s, % of bandwidth, bound), the Steps table's MFU and the
// op table's FLOPs and bytes equal `report --json`, and achieved TFLOP/s recomputes from the
// CLI's FLOPs and measured time; the Charts tab draws the roofline (screenshot roofline.png)
// with one point per kernel with known FLOPs and bytes; a GEMM kernel's details show its work
// over its own duration. On the MI250 trace, whose GPU ("AMD Radeon Graphics") the peak table
// does not know, the chart says so in its place; peaks typed into the page draw it, and the
// tables then equal `report --json --gpu-peak` with the same peaks. The kernel names left off
// the chart are listed under it with the reason, equal to `report --json` `roofline.left_off[]`
// (H100 bert: 5; gpumodel: its only kernel, a GEMM whose op recorded no shapes, where the chart
// says first that nothing is plotted and asks for no peaks); a point hovered shows its kernel's
// name and work (equal to `report --json` kernels[]) and a click searches it on the timeline.
// State is read from `window.kinetoscope`; waits are on `idle()` and loads, never on sleeps.
const path = require('node:path');
const { test, expect } = require('../pages/app');
const { realFixture, cliReport, RESULTS_DIR } = require('../support/fixtures');

const H100 = 'tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz';
const MI250 = 'hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz';
const GPUMODEL = 'gpumodel__trace.json';
const FIRST_ROWS = 8;
const KERNEL_WORK = [
  ['flops', 'flops'], ['achieved_tflops', 'achieved_tflops'], ['peak_pct', 'peak_pct'],
  ['achieved_gbps', 'achieved_gbps'], ['bandwidth_pct', 'bandwidth_pct'],
];

/** `window.kinetoscope.charts.roofline` as plain data (null off the charts tab or before it arrived). */
async function roofline(app) {
  return app.page.evaluate(() => {
    const c = window.kinetoscope.charts;
    return c && JSON.parse(JSON.stringify(c.roofline));
  });
}

/** The left-off list under the chart and the hook's `leftOff` equal `report --json` `roofline`. */
async function expectLeftOff(app, cli) {
  const want = cli.roofline.left_off;
  const chart = await roofline(app);
  expect(chart.points.length, 'plotted').toBe(cli.roofline.plotted);
  expect(chart.leftOff.map((k) => [k.name, k.calls, k.reason, k.why])).toEqual(
    want.map((k) => [k.name, k.calls, k.reason, k.why]),
  );
  for (const [i, k] of chart.leftOff.entries()) {
    expect(k.totalNs / 1000, k.name).toBeCloseTo(want[i].total_us, 6);
    // The share is a sum of floats, in the page's order of additions: equal to a few ulps.
    expect(k.share, k.name).toBeCloseTo(want[i].share, 12);
  }
  const rows = app.page.getByTestId('roofline-left-off-row');
  await expect(rows).toHaveCount(want.length);
  const shown = await rows.evaluateAll((trs) => trs.map((tr) => ({
    name: tr.dataset.name, reason: tr.dataset.reason, totalNs: Number(tr.dataset.totalNs), text: tr.textContent,
  })));
  for (const [i, row] of shown.entries()) {
    expect([row.name, row.reason], `left-off row ${i}`).toEqual([want[i].name, want[i].reason]);
    expect(row.totalNs / 1000, `left-off row ${i} time`).toBeCloseTo(want[i].total_us, 6);
    expect(row.text, `left-off row ${i} says why`).toContain(want[i].why);
  }
}

/** A cell of `shownRows` equals the CLI's number, or shows "—" (no `data-value`) when it is null. */
function expectNumber(cell, want, what) {
  if (want === null || want === undefined) {
    expect(cell.value, `${what} unknown`).toBeNull();
    expect(cell.text, `${what} shows a dash`).toBe('—');
  } else {
    expect(cell.value, what).not.toBeNull();
    expect(Math.abs(cell.value - want), `${what}: page ${cell.value}, cli ${want}`).toBeLessThanOrEqual(1e-9 * Math.abs(want));
  }
}

/** The first kernel rows' roofline cells equal `expected` (report --json kernels[]). */
async function expectKernelWork(app, expected) {
  await app.openTab('kernels');
  const n = Math.min(FIRST_ROWS, expected.length);
  const shown = await app.shownRows('kernel-row', n);
  for (const [i, row] of shown.entries()) {
    const k = expected[i];
    const what = (key) => `kernel row ${i} (${k.name.slice(0, 40)}) ${key}`;
    expect(row.name.title, what('name')).toBe(k.name);
    for (const [key, field] of KERNEL_WORK) expectNumber(row[key], k[field], what(key));
    expect(row.bound.text, what('bound')).toBe(k.bound || '—');
  }
  return shown;
}

/** Distinct colors among sampled pixels of canvas `testId` (a blank canvas has 1). */
async function distinctColors(app, testId) {
  return app.page.getByTestId(testId).evaluate((canvas) => {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const colors = new Set();
    for (let i = 0; i < data.length; i += 4 * 37) colors.add(`${data[i]},${data[i + 1]},${data[i + 2]}`);
    return colors.size;
  });
}

test('H100: roofline columns, MFU and op work equal report --json; the chart and a GEMM\'s details', async ({ app, page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await app.open();
  const file = realFixture(H100);
  const cli = cliReport(file);
  await app.upload(file);

  // Kernels: the roofline columns are shown by default at 1440 px.
  await app.openTab('kernels');
  for (const key of ['flops', 'achieved_tflops', 'peak_pct', 'achieved_gbps', 'bandwidth_pct', 'bound']) {
    await expect(page.getByTestId(`col-${key}`), `col-${key} shown at 1440 px`).toBeVisible();
  }
  const shown = await expectKernelWork(app, cli.kernels);
  expect(shown.some((r) => r.achieved_tflops.value !== null), 'a top kernel has a rate').toBe(true);
  // A reader recomputes TFLOP/s from the CLI's FLOPs and the time they were measured over.
  for (const k of cli.kernels.filter((x) => x.flops !== null)) {
    expect(Math.abs(k.achieved_tflops - k.flops / (k.work_us * 1e-6) / 1e12)).toBeLessThanOrEqual(1e-9 * k.achieved_tflops);
  }
  await app.screenshot('roofline-kernels');

  // Steps: MFU per step.
  await app.openTab('steps');
  const steps = await app.rows('step-row');
  expect(steps.length).toBe(cli.steps.length);
  for (const [i, s] of steps.entries()) {
    const want = cli.steps[i].mfu_pct;
    if (want === null) expect(s.mfu_pct, `step ${s.step} MFU`).toBe('—');
    else expect(Math.abs(s.mfu_pct - want), `step ${s.step} MFU`).toBeLessThanOrEqual(1e-9 * want);
  }
  expect(cli.steps.some((s) => s.mfu_pct !== null), 'some step has an MFU').toBe(true);

  // Ops: FLOPs and bytes summed over calls (hidden by default; shown through the Columns menu).
  await app.openTab('ops');
  await app.showColumns('flops', 'bytes', 'achieved_tflops', 'achieved_gbps');
  const ops = await app.rows('op-row');
  const byName = new Map(cli.ops.map((o) => [o.name, o]));
  let counted = 0;
  for (const o of ops) {
    const want = byName.get(o.name);
    expect(want, `op ${o.name} in report --json`).toBeTruthy();
    for (const key of ['flops', 'bytes']) {
      if (want[key] === null) expect(o[key], `${o.name} ${key}`).toBe('—');
      else expect(o[key], `${o.name} ${key}`).toBe(want[key]);
    }
    counted += want.flops === null ? 0 : 1;
  }
  expect(counted, 'ops with FLOPs').toBeGreaterThan(0);

  // Charts: one point per kernel with known FLOPs and bytes, longest first, against the H100's roofs.
  await app.openTab('charts');
  const chart = await roofline(app);
  const plotted = cli.kernels.filter((k) => k.flops > 0 && k.bytes > 0);
  expect(chart).toMatchObject({ known: true, model: 'NVIDIA H100 SXM', message: null });
  expect(chart.points.map((p) => p.name)).toEqual(plotted.map((k) => k.name));
  expect(chart.points.length + chart.unplotted).toBe(cli.kernels.length);
  for (const [i, p] of chart.points.entries()) {
    expect(Math.abs(p.tflops - plotted[i].achieved_tflops)).toBeLessThanOrEqual(1e-9 * p.tflops);
    expect(p.bound).toBe(plotted[i].bound);
  }
  expect(chart.roof.tflops).toBeGreaterThan(0);
  expect(chart.ridge).toBeCloseTo(chart.roof.tflops * 1000 / chart.peaks.gbps, 9);
  await expect(page.getByTestId('roofline-caption')).toContainText('NVIDIA H100 SXM');
  await expect(page.getByTestId('roofline-unknown')).toHaveCount(0);
  const canvas = page.getByTestId('chart-roofline');
  await expect(canvas).toBeVisible();
  await expect.poll(() => distinctColors(app, 'chart-roofline'), 'the roofline is drawn').toBeGreaterThan(3);
  await app.screenshot('roofline');
  await canvas.locator('xpath=..').screenshot({ path: path.join(RESULTS_DIR, 'roofline-chart.png') });
  await expectLeftOff(app, cli);
  expect(cli.roofline.left_off.length, 'H100 bert leaves kernels off').toBeGreaterThan(0);

  // Every circle inside the plot; the last drawn (on top) hovered shows its kernel's work.
  const box = await canvas.boundingBox();
  const circles = JSON.parse(await canvas.getAttribute('data-circles'));
  expect(circles.length).toBe(chart.points.length);
  for (const [x, y, r] of circles) {
    expect(x - r >= 0 && y - r >= 0 && x + r <= box.width && y + r <= box.height, `circle ${x},${y} inside`).toBe(true);
  }
  const top = chart.points.length - 1;
  const point = chart.points[top];
  const kernel = cli.kernels.find((k) => k.name === point.name);
  for (const [mine, theirs] of [['flops', 'flops'], ['bytes', 'bytes'], ['tflops', 'achieved_tflops'], ['gbps', 'achieved_gbps']]) {
    expect(Math.abs(point[mine] - kernel[theirs]), `hovered ${mine}`).toBeLessThanOrEqual(1e-9 * kernel[theirs]);
  }
  await page.mouse.move(box.x + circles[top][0], box.y + circles[top][1]);
  const tip = page.getByTestId('roofline-tip');
  await expect(tip).toHaveAttribute('data-name', point.name);
  await expect(tip).toContainText(point.name);
  await expect(tip).toContainText('TFLOP/s');
  await app.screenshot('roofline-hover');
  await page.mouse.move(box.x + 2, box.y + 2);
  await expect(tip).toHaveCount(0);
  // A click searches the kernel's slices on the timeline, as a kernel-table row does.
  await page.mouse.click(box.x + circles[top][0], box.y + circles[top][1]);
  await app.idle();
  await expect(app.searchInput).toHaveValue(point.name);
  await expect.poll(async () => ((await app.timeline()).search || {}).text).toBe(point.name);

  // Details of the top GEMM kernel: its work, rates over its own duration.
  const gemm = cli.kernels.find((k) => k.class === 'gemm' && k.flops !== null);
  expect(gemm, 'a GEMM kernel with FLOPs').toBeTruthy();
  await app.openTab('summary');
  await app.waitForTimeline();
  await app.searchInput.fill(gemm.name);
  await app.idle();
  let sel = null;
  for (let n = 0; n < 5 && !(sel && sel.name === gemm.name); n += 1) {
    await app.searchInput.press('Enter');
    await app.idle();
    sel = (await app.timeline()).selection;
  }
  expect(sel && sel.name).toBe(gemm.name);
  const work = page.getByTestId('detail-work');
  await expect(work).toBeVisible();
  const cells = Object.fromEntries(await work.getByTestId('detail-work-row').evaluateAll((trs) => trs.map((tr) => [
    tr.dataset.key, { value: tr.dataset.value ? Number(tr.dataset.value) : null, text: tr.querySelector('td').textContent },
  ])));
  expect(cells.flops.value).toBeGreaterThan(0);
  expect(cells.bytes.value).toBeGreaterThan(0);
  const tflops = cells.flops.value / (sel.durNs * 1e-9) / 1e12;
  expect(Math.abs(cells.tflops.value - tflops)).toBeLessThanOrEqual(1e-9 * tflops);
  expect(Math.abs(cells.gbps.value - cells.bytes.value / sel.durNs)).toBeLessThanOrEqual(1e-9 * cells.gbps.value);
  expect(cells.peak_pct.value).toBeGreaterThan(0);
  expect(['compute', 'memory']).toContain(cells.bound.text);
  await expect(work.getByTestId('work-op')).toBeVisible();
  await app.screenshot('roofline-details');
});

test('MI250: an unknown GPU says so; peaks typed in draw the roofs and equal report --gpu-peak', async ({ app, page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await app.open();
  const file = realFixture(MI250);
  await app.upload(file);
  await app.openTab('charts');
  const unknown = page.getByTestId('roofline-unknown');
  await expect(unknown).toHaveAttribute('data-device', 'AMD Radeon Graphics');
  await expect(unknown).toContainText('GPU "AMD Radeon Graphics" is not in the peak table');
  await expect(page.getByTestId('chart-roofline')).toBeHidden();
  const before = await roofline(app);
  expect(before).toMatchObject({ known: false, peaks: null, roof: null });
  expect(before.points.every((p) => p.bound === null && p.peakPct === null)).toBe(true);
  await app.screenshot('roofline-unknown-gpu');

  // A value that is not a number is refused in the page: nothing is sent.
  const loads = await page.evaluate(() => window.kinetoscope.loads);
  await page.getByTestId('peak-bf16').fill('fast');
  await page.getByTestId('peaks-apply').click();
  await expect(page.getByTestId('peaks-error')).toContainText('bf16 TFLOP/s');
  expect(await page.evaluate(() => window.kinetoscope.loads)).toBe(loads);

  // Peaks given: the worker measures the trace again (answered like a load), the view returns
  // to the Charts tab with the roofs drawn.
  const spec = 'bf16=362.1,fp32=45.3,gbps=3276.8';
  await expect(page.getByTestId('peak-fp8'), 'an fp8 field').toBeVisible();
  await expect(page.getByTestId('peak-fp4'), 'an fp4 field').toBeVisible();
  await page.getByTestId('peak-bf16').fill('362.1');
  await page.getByTestId('peak-fp32').fill('45.3');
  await page.getByTestId('peak-gbps').fill('3276.8');
  await page.getByTestId('peaks-apply').click();
  await app.waitForLoads(loads + 1);
  await expect.poll(async () => (await roofline(app) || {}).peaks, 'the given peaks').toEqual({ fp32: 45.3, bf16: 362.1, gbps: 3276.8 });
  const given = await roofline(app);
  await expect(unknown).toHaveCount(0);
  await expect(page.getByTestId('roofline-caption')).toContainText('AMD Radeon Graphics (given peaks)');
  expect(given.points.length).toBe(before.points.length);
  if (given.points.length > 0) {
    await expect(page.getByTestId('chart-roofline')).toBeVisible();
    await expect.poll(() => distinctColors(app, 'chart-roofline'), 'the roofline is drawn').toBeGreaterThan(3);
    expect(given.roof).not.toBeNull();
  }
  await app.screenshot('roofline-given-peaks');
  const cli = cliReport(file, '--gpu-peak', spec);
  await expectKernelWork(app, cli.kernels);
  expect(cli.kernels.some((k) => k.peak_pct !== null) || given.points.length === 0).toBe(true);

  // Table peaks: back to none.
  await app.openTab('charts');
  const again = await page.evaluate(() => window.kinetoscope.loads);
  await page.getByTestId('peaks-reset').click();
  await app.waitForLoads(again + 1);
  await expect(page.getByTestId('roofline-unknown')).toBeVisible();
  expect((await roofline(app)).peaks).toBeNull();
});

test('gpumodel: no kernel plotted is said first, with its only kernel left off for want of shapes', async ({ app, page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await app.open();
  const file = realFixture(GPUMODEL);
  const cli = cliReport(file);
  await app.upload(file);
  await app.openTab('charts');
  const empty = page.getByTestId('roofline-empty');
  await expect(empty).toContainText('No kernel with known FLOPs and bytes');
  await expect(empty).toContainText(cli.roofline.left_off[0].name);
  await expect(page.getByTestId('roofline-unknown'), 'no peaks asked for').toHaveCount(0);
  await expect(page.getByTestId('chart-roofline')).toBeHidden();
  const said = await empty.boundingBox();
  const form = await page.getByTestId('roofline-peaks').boundingBox();
  expect(said.y, 'said above the peaks form').toBeLessThan(form.y);
  expect(cli.roofline).toMatchObject({ plotted: 0, left_off: [{ reason: 'no_shapes', share: 1 }] });
  await expectLeftOff(app, cli);
  await expect(page.getByTestId('roofline-left-off')).toHaveAttribute('open', '');
  await app.screenshot('roofline-none-plotted');
});

test('H100: the peaks form shows the table\'s fp8 peak', async ({ app, page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await app.open();
  const file = realFixture(H100);
  const cli = cliReport(file);
  await app.upload(file);
  await app.openTab('charts');
  const fp8 = cli.gpu_peaks.tflops.fp8;
  expect(fp8, 'the H100 has an fp8 peak').toBeGreaterThan(0);
  await expect(page.getByTestId('peak-fp8')).toHaveValue(String(fp8));
  const fp4 = cli.gpu_peaks.tflops.fp4;
  await expect(page.getByTestId('peak-fp4')).toHaveValue(fp4 === null || fp4 === undefined ? '' : String(fp4));
});
