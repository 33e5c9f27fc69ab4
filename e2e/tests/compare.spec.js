// Journey: compare two traces (docs/viewer.md#compare-two-traces). Load the baseline, "Compare
// with…" the candidate: the verdict, summary, op and kernel diffs and findings diff appear, numbers
// as `kinetoscope diff --json` gives them; sorting by a delta orders rows. Then the share-link form
// `?url=CAND&base=BASE` with the same trace on both sides: every row `same`, every delta 0.
// The stacked timelines: both panels aligned at the chosen step's start (the starts `kinetoscope
// report --json` gives), one scale; W, ctrl+wheel and drag move both; a step picked on the demo
// pair. The share link carries the compare view (step, window, sorts, by shape) to a new page.
// The module diff (BERT on two GPUs) lists every module by path as `diff --json` does.
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { test, expect, AppPage } = require('../pages/app');
const { CLI, DEMO_TRACE, RESULTS_DIR, realFixture, cliReport } = require('../support/fixtures');
const { serve } = require('../support/servers');

const DIST = path.resolve(__dirname, '..', process.env.E2E_DIST || '../dist');

const BASE = 'param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json';
const CAND = 'param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json';

/** `kinetoscope diff --json BASE CAND`, parsed. */
function cliDiff(base, cand) {
  const out = execFileSync(CLI, ['diff', '--json', base, cand], { encoding: 'utf8', maxBuffer: 256 << 20 });
  return JSON.parse(out);
}

test('compare two dlrm ranks: verdict, summary, op and kernel diffs as the CLI, sort by delta', async ({ app }) => {
  const base = realFixture(BASE);
  const cand = realFixture(CAND);
  const cli = cliDiff(base, cand);
  await app.open();
  await app.upload(base);
  await app.compareWith(cand);

  const panel = app.page.getByTestId('compare');
  await expect(panel).toBeVisible();
  await expect(app.page.getByTestId('tab-compare')).toHaveClass(/active/);
  let c = await app.compare();
  // The order is named before any click: the CLI's default, largest |Δ| first.
  expect(c).toMatchObject({
    base: path.basename(base), cand: path.basename(cand), pending: false,
    sort: { key: 'self_cuda_delta', desc: true, abs: true },
    kernelSort: { key: 'total_delta', desc: true, abs: true },
  });
  expect(c.verdict).toBe(cli.verdict.text);
  await expect(app.page.getByTestId('compare-verdict')).toHaveText(cli.verdict.text);
  // Two ranks of one run: the verdict says so, not "faster" or "slower".
  expect(cli.verdict.same_run).toBeTruthy();
  expect(c.verdict).toMatch(/^Two ranks of one run \(\d+ and \d+ of \d+/);
  expect(c.verdict).not.toMatch(/faster|slower|regress/i);
  expect(c.ops).toBe(cli.ops.length);
  expect(c.kernels).toBe(cli.kernels.length);

  const summaryRows = app.page.getByTestId('compare-summary-row');
  await expect(summaryRows).toHaveCount(cli.summary.length);
  const keys = await summaryRows.evaluateAll((trs) => trs.map((tr) => tr.dataset.key));
  expect(keys).toEqual(cli.summary.map((r) => r.key));
  // The CLI's JSON has times in µs, the page ns.
  for (const r of cli.summary) {
    const row = app.page.locator(`[data-testid="compare-summary-row"][data-key="${r.key}"]`);
    const delta = await row.locator('td[data-key="delta"]').getAttribute('data-value');
    if (r.delta === null) expect(delta, r.key).toBe('');
    else expect(Number(delta) / (r.unit === 'us' ? 1000 : 1), r.key).toBeCloseTo(r.delta, 6);
  }

  // Only the rows in view are built: `rows()` scrolls each diff through.
  const ops = await app.rows('compare-op-row');
  expect(ops).toHaveLength(cli.ops.length);
  // Before any sort click the page shows the CLI's order: largest |Δ Self CUDA| first, unchanged
  // rows last (kernels: |Δ total|).
  expect(ops.map((r) => `${r.status} ${r.name}`)).toEqual(cli.ops.map((r) => `${r.status} ${r.name}`));
  const kernels = await app.rows('compare-kernel-row');
  expect(kernels.map((r) => r.name)).toEqual(cli.kernels.map((r) => r.name));
  const absCuda = (await app.column('compare-op-row', 'self_cuda_delta')).map(Math.abs);
  expect(absCuda).toEqual([...absCuda].sort((a, b) => b - a));
  expect(ops[0].status, 'an unchanged row does not lead').not.toBe('same');
  await expect(app.page.getByTestId('compare-ops').getByTestId('col-self_cuda_delta')).toHaveAttribute('data-sort', 'abs');
  await expect(app.page.getByTestId('compare-findings')).toBeVisible();
  await panel.evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await app.page.screenshot({ path: path.join(RESULTS_DIR, 'compare-dlrm.png') });

  // Sort the op diff by Δ Self CUDA: descending, then ascending.
  const header = app.page.getByTestId('compare-ops').getByTestId('col-self_cuda_delta');
  await header.click();
  await expect(header).toHaveAttribute('data-sort', 'desc');
  await app.idle();
  c = await app.compare();
  expect(c.sort).toEqual({ key: 'self_cuda_delta', desc: true, abs: false });
  const desc = await app.column('compare-op-row', 'self_cuda_delta');
  expect(desc.length).toBe(cli.ops.length);
  expect(desc).toEqual([...desc].sort((a, b) => b - a));
  expect(desc[0] / 1000).toBeCloseTo(Math.max(...cli.ops.map((r) => r.self_device_us.delta)), 6);
  await header.click();
  await expect(header).toHaveAttribute('data-sort', 'asc');
  await app.idle();
  const asc = await app.column('compare-op-row', 'self_cuda_delta');
  expect(asc).toEqual([...asc].sort((a, b) => a - b));

  // Kernels sort on their own.
  const kHeader = app.page.getByTestId('compare-kernels').getByTestId('col-total_delta');
  await kHeader.click();
  await app.idle();
  c = await app.compare();
  expect(c.kernelSort).toEqual({ key: 'total_delta', desc: true, abs: false });
  const kd = await app.column('compare-kernel-row', 'total_delta');
  expect(kd).toEqual([...kd].sort((a, b) => b - a));
  await app.page.screenshot({ path: path.join(RESULTS_DIR, 'compare-dlrm-sorted.png') });

  // Clear baseline: the panel says how to compare again.
  await app.page.getByTestId('compare-clear').click();
  await app.idle();
  expect(await app.compare()).toBeNull();
  await expect(app.page.getByTestId('compare-op-row')).toHaveCount(0);
});

test('?url=&base= with the same trace on both sides: every row same, every delta 0', async ({ app }) => {
  const demo = './public/demo.pt.trace.json.gz';
  await app.open(`?url=${demo}&base=${demo}`, 2);
  await expect(app.page.getByTestId('compare')).toBeVisible();
  const c = await app.compare();
  expect(c.base).toBe(c.cand);
  expect(c.ops).toBeGreaterThan(0);
  const ops = await app.rows('compare-op-row');
  expect(ops).toHaveLength(c.ops);
  expect(new Set(ops.map((r) => r.status))).toEqual(new Set(['same']));
  for (const key of ['calls_delta', 'self_cpu_delta', 'self_cuda_delta', 'cuda_total_delta']) {
    expect(new Set(await app.column('compare-op-row', key)), key).toEqual(new Set([0]));
  }
  const deltas = await app.page.getByTestId('compare-summary-row').locator('td[data-key="delta"]')
    .evaluateAll((tds) => tds.map((td) => td.dataset.value));
  for (const d of deltas) expect(['', '0']).toContain(d);
  await expect(app.page.getByTestId('compare-findings-new').getByTestId('compare-finding')).toHaveCount(0);
  await expect(app.page.getByTestId('compare-findings-gone').getByTestId('compare-finding')).toHaveCount(0);
  await app.screenshot('compare-same');
});

test('module diff: BERT on H100 against MI300, every module by path as diff --json, tree order, then sorted', async ({ app }) => {
  const base = realFixture('tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz');
  const cand = realFixture('tracelens__mi300__gaunernst_bert-small-uncased__1016001.json.gz');
  const cli = cliDiff(base, cand);
  await app.open();
  await app.upload(base);
  await app.compareWith(cand);
  expect((await app.compare()).modules).toBe(84);
  const rows = await app.rows('compare-module-row');
  expect(rows.map((r) => r.name), 'tree order, by path').toEqual(cli.modules.map((m) => m.path));
  for (const [i, m] of cli.modules.entries()) {
    for (const [key, json] of [['calls', 'calls'], ['host', 'host_us'], ['device', 'device_us']]) {
      const scale = key === 'calls' ? 1 : 1000;
      expect(rows[i][`${key}_base`] / scale, `${m.path} ${key}`).toBeCloseTo(m[json].base, 6);
      expect(rows[i][`${key}_cand`] / scale, `${m.path} ${key}`).toBeCloseTo(m[json].candidate, 6);
      expect(rows[i][`${key}_delta`] / scale, `${m.path} ${key}`).toBeCloseTo(m[json].delta, 6);
    }
  }
  // In tree order a child reads as its own name, indented under its parent.
  const encoder = app.page.locator('[data-testid="compare-module-row"] td[data-key="name"][title$="/BertEncoder_0"]');
  await expect(encoder).toHaveText(/^\u00a0{4}BertEncoder_0$/);
  const header = app.page.getByTestId('compare-modules').getByTestId('col-host_delta');
  await header.click();
  await expect(header).toHaveAttribute('data-sort', 'desc');
  await app.idle();
  const desc = await app.column('compare-module-row', 'host_delta');
  expect(desc).toEqual([...desc].sort((a, b) => b - a));
  await app.screenshot('compare-modules');
});

/** `[{number, startNs, endNs}]` of the host steps `kinetoscope report --json` lists. */
function reportSteps(file) {
  return cliReport(file).steps.map((st) => {
    const startNs = Math.round(st.cpu_start_us * 1000);
    return { number: Number(st.name.split('#')[1]), startNs, endNs: startNs + Math.round(st.cpu_dur_us * 1000) };
  });
}

/** Each panel's window minus its step start equals the shared window (one relative window). */
function expectAligned(s) {
  expect(s.views.base[0] - s.baseStartNs).toBeCloseTo(s.windowNs[0], 3);
  expect(s.views.base[1] - s.baseStartNs).toBeCloseTo(s.windowNs[1], 3);
  expect(s.views.cand[0] - s.candStartNs).toBeCloseTo(s.windowNs[0], 3);
  expect(s.views.cand[1] - s.candStartNs).toBeCloseTo(s.windowNs[1], 3);
}

test('stacked timelines: both dlrm ranks aligned at step 10, one scale; W, ctrl+wheel and drag move both', async ({ app, page }) => {
  const base = realFixture(BASE);
  const cand = realFixture(CAND);
  const [bs] = reportSteps(base);
  const [cs] = reportSteps(cand);
  await app.open();
  await app.upload(base);
  await app.compareWith(cand);
  await app.waitForStack();

  let s = await app.stack();
  expect(s.steps).toEqual([10]);
  expect([s.step, s.baseStep, s.candStep]).toEqual([bs.number, bs.number, cs.number]);
  expect(s.baseStartNs).toBe(bs.startNs);
  expect(s.candStartNs).toBe(cs.startNs);
  expectAligned(s);
  // The longer step shows whole from its start.
  const longer = Math.max(bs.endNs - bs.startNs, cs.endNs - cs.startNs);
  expect(s.windowNs[0]).toBeLessThan(0);
  expect(s.windowNs[1]).toBeGreaterThan(longer);
  expect(s.lanes.base).toBeGreaterThan(0);
  expect(s.lanes.cand).toBeGreaterThan(0);
  await expect(page.getByTestId('compare-step')).toHaveValue('10');
  const pct = (((cs.endNs - cs.startNs) - (bs.endNs - bs.startNs)) / (bs.endNs - bs.startNs) * 100).toFixed(1);
  await expect(page.getByTestId('compare-step-note')).toContainText(`step 10`);
  await expect(page.getByTestId('compare-step-note')).toContainText(`(${pct.startsWith('-') ? '' : '+'}${pct}%)`);
  await expect(page.getByTestId('compare-stack-base').getByTestId('lane-label')).toHaveCount(s.lanes.base);
  await expect(page.getByTestId('compare-stack-cand').getByTestId('lane-label')).toHaveCount(s.lanes.cand);
  const stack = page.getByTestId('compare-stack');
  await stack.scrollIntoViewIfNeeded();
  await stack.screenshot({ path: path.join(RESULTS_DIR, 'compare-stacked.png') });

  // Hover a slice on the candidate panel: the tooltip names it with its duration.
  const canvas = page.getByTestId('compare-canvas-cand');
  const box = await canvas.boundingBox();
  const xOf = (ns) => box.x + (ns - s.windowNs[0]) / s.nsPerPx;
  let hover = null;
  for (let y = box.y + 40; y < box.y + box.height && !hover; y += 6) {
    await page.mouse.move(xOf(longer * 0.05), y);
    hover = (await app.stack()).hover;
  }
  expect(hover).not.toBeNull();
  await app.idle();
  hover = (await app.stack()).hover;
  expect(hover.pane).toBe('cand');
  expect(hover.durNs).toBeGreaterThanOrEqual(0);
  await expect(page.getByTestId('compare-stack-cand').getByTestId('tooltip')).toContainText(hover.name);

  // W with the pointer over the stack zooms both panels around it; the main timeline stays.
  const main = await app.timeline();
  const anchorNs = s.windowNs[0] + (xOf(longer * 0.05) - box.x) * s.nsPerPx;
  await page.keyboard.press('w');
  await app.idle();
  const z = await app.stack();
  expect(z.active).toBe(true);
  expect(z.windowNs[1] - z.windowNs[0]).toBeCloseTo((s.windowNs[1] - s.windowNs[0]) * 0.8, 0);
  // The time under the pointer stays (within the pixel: pointer offsets are whole pixels).
  expect(Math.abs(z.windowNs[0] + (xOf(longer * 0.05) - box.x) * z.nsPerPx - anchorNs)).toBeLessThanOrEqual(s.nsPerPx);
  expectAligned(z);
  const after = await app.timeline();
  expect([after.startNs, after.endNs]).toEqual([main.startNs, main.endNs]);

  // Ctrl+wheel zooms in further, a drag pans: both panels together.
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -100);
  await page.keyboard.up('Control');
  await app.idle();
  const w = await app.stack();
  expect(w.windowNs[1] - w.windowNs[0]).toBeLessThan(z.windowNs[1] - z.windowNs[0]);
  expectAligned(w);
  const y0 = box.y + 20;
  await page.mouse.move(box.x + 300, y0);
  await page.mouse.down();
  await page.mouse.move(box.x + 200, y0, { steps: 4 });
  await page.mouse.up();
  await app.idle();
  const d = await app.stack();
  expect(d.windowNs[0] - w.windowNs[0]).toBeCloseTo(100 * w.nsPerPx, -1);
  expectAligned(d);
  await app.waitForStack();
  await stack.screenshot({ path: path.join(RESULTS_DIR, 'compare-stacked-zoomed.png') });
});

test('stacked timelines: the step picker aligns both panels at the chosen step', async ({ app, page }) => {
  const demo = './public/demo.pt.trace.json.gz';
  const steps = reportSteps(DEMO_TRACE);
  expect(steps.length).toBeGreaterThan(2);
  await app.open(`?url=${demo}&base=${demo}`, 2);
  await app.waitForStack();
  let s = await app.stack();
  expect(s.steps).toEqual(steps.map((st) => st.number));
  expect(s.baseStartNs).toBe(steps[0].startNs);
  const pick = steps[2];
  await app.pickStep('compare-step', pick.number);
  await app.waitForStack();
  s = await app.stack();
  expect([s.step, s.candStep]).toEqual([pick.number, pick.number]);
  expect([s.baseStartNs, s.candStartNs]).toEqual([pick.startNs, pick.startNs]);
  expectAligned(s);
  await app.screenshot('compare-stacked-step');

  // Next and previous walk the steps both traces have, from the CLI's list.
  await page.getByTestId('compare-step-next').click();
  await app.waitForStack();
  s = await app.stack();
  expect([s.step, s.baseStartNs, s.candStartNs]).toEqual([steps[3].number, steps[3].startNs, steps[3].startNs]);
  await expect(page.getByTestId('compare-step')).toHaveValue(String(steps[3].number));
  await page.getByTestId('compare-step-prev').click();
  await app.waitForStack();
  s = await app.stack();
  expect([s.step, s.baseStartNs]).toEqual([pick.number, pick.startNs]);

  // Zoomed in with W, Reset zoom shows the aligned step whole again, as when it was picked.
  const whole = s.windowNs;
  // Keys typed into the step picker stay there: leave it first.
  await page.evaluate(() => document.activeElement?.blur());
  const canvas = page.getByTestId('compare-canvas-base');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  await canvas.hover({ position: { x: box.width * 0.3, y: 60 } });
  await page.keyboard.press('w');
  await page.keyboard.press('w');
  await app.waitForStack();
  s = await app.stack();
  expect(s.windowNs[1] - s.windowNs[0], 'W zoomed in').toBeLessThan((whole[1] - whole[0]) * 0.9);
  await page.getByTestId('compare-stack-reset').click();
  await app.waitForStack();
  s = await app.stack();
  expect(s.windowNs[0]).toBeCloseTo(whole[0], 0);
  expect(s.windowNs[1]).toBeCloseTo(whole[1], 0);
  expectAligned(s);
});

test('share link: the compare view (step, window, sorts, by shape) reopens in a new page', async ({ app, page, context }) => {
  const site = await serve({ '/k/': DIST, '/traces/d0.json': realFixture(BASE), '/traces/d1.json': realFixture(CAND) });
  try {
    await page.goto(`${site.origin}/k/?url=../traces/d1.json&base=../traces/d0.json`);
    await app.waitForLoads(2);
    await app.waitForStack();
    // Set the view: by shape, op sort, kernel sort ascending, zoom and pan the stack.
    await page.getByTestId('compare-by-shape').check();
    await app.idle();
    await page.getByTestId('compare-ops').getByTestId('col-self_cpu_delta').click();
    const kHeader = page.getByTestId('compare-kernels').getByTestId('col-calls_delta');
    await kHeader.click();
    await kHeader.click();
    await app.pickStep('compare-step', 10);
    await app.waitForStack();
    const box = await page.getByTestId('compare-canvas-base').boundingBox();
    await page.mouse.move(box.x + box.width * 0.3, box.y + 60);
    await page.keyboard.press('w');
    await page.keyboard.press('w');
    await page.keyboard.press('d');
    await app.waitForStack();
    const compareView = async (a) => {
      const c = await a.compare();
      const st = c.stack;
      return {
        byShape: c.byShape, sort: c.sort, kernelSort: c.kernelSort, ops: c.ops,
        step: st.step, baseStartNs: st.baseStartNs, candStartNs: st.candStartNs,
        windowNs: st.windowNs.map(Math.round),
        tab: await a.page.evaluate(() => document.querySelector('.tabs button.active')?.dataset.testid),
      };
    };
    const before = await compareView(app);
    expect(before).toMatchObject({ byShape: true, sort: { key: 'self_cpu_delta', desc: true }, kernelSort: { key: 'calls_delta', desc: false }, step: 10, tab: 'tab-compare' });
    await page.waitForFunction(() => /cwin=/.test(location.hash) && /cshape=1/.test(location.hash) && /cksort=calls_delta,asc/.test(location.hash));

    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.origin });
    await page.getByTestId('copy-link').click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await page.evaluate(() => window.kinetoscope.link));
    expect(copied).toContain('cstep=10');
    const other = new AppPage(await context.newPage());
    await other.page.goto(copied);
    await other.waitForLoads(2);
    await other.waitForStack();
    const restored = await compareView(other);
    for (const [i, v] of before.windowNs.entries()) expect(Math.abs(restored.windowNs[i] - v)).toBeLessThanOrEqual(1);
    expect({ ...restored, windowNs: null }).toEqual({ ...before, windowNs: null });
    await other.page.getByTestId('compare-stack').screenshot({ path: path.join(RESULTS_DIR, 'compare-stacked-link.png') });
    expect(other.pageErrors).toEqual([]);
  } finally {
    await site.close();
  }
});
