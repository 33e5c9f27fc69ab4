// Journey: a teammate opens a hand-written share link. Each fragment key is written literally as
// docs/deploy.md#share-links documents it (`tab=`, `scope=step:N`, `sort=KEY,desc|asc`,
// `shape=1`, `finding=RULE`, `cstep=N`, `csort=`, `cksort=`) and opened in a fresh page; the test
// asserts what that page shows (scope picker, sorted header, rows, the active finding and its
// evidence, the compare sorts and step) against `kinetoscope report --json` / `diff --json`, not
// against another page.
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { test, expect } = require('../pages/app');
const { CLI, DEMO_TRACE, realFixture, cliReport } = require('../support/fixtures');
const { serve } = require('../support/servers');

const DIST = path.resolve(__dirname, '..', process.env.E2E_DIST || '../dist');

/** `{name: calls}` of table rows (page cells or report rows). */
const callsByName = (names, calls) => Object.fromEntries(names.map((n, i) => [n, calls[i]]));

for (const [tab, rowId, field] of [['ops', 'op-row', 'ops'], ['kernels', 'kernel-row', 'kernels']]) {
  test(`#tab=${tab}&scope=step:3&sort=calls,asc shows step 3's ${tab} of report --step 3, fewest calls first`, async ({ app, page }) => {
    await app.open(`#tab=${tab}&scope=step:3&sort=calls,asc`);
    await expect(page.getByTestId(`tab-${tab}`)).toHaveClass(/active/);
    await expect(page.getByTestId('table-scope')).toHaveValue('step');
    await expect(page.getByTestId('table-step')).toHaveValue('3');
    await expect(page.getByTestId('col-calls')).toHaveAttribute('data-sort', 'asc');
    expect(await app.table()).toMatchObject({ kind: tab, scope: 'step', sort: { key: 'calls', desc: false } });
    const expected = cliReport(DEMO_TRACE, '--step', '3')[field];
    const names = await app.column(rowId, 'name');
    const calls = await app.column(rowId, 'calls');
    expect(callsByName(names, calls)).toEqual(callsByName(expected.map((r) => r.name), expected.map((r) => r.calls)));
    expect(calls).toEqual([...calls].sort((a, b) => a - b));
  });
}

test('#tab=ops&shape=1&sort=cpu_total,desc groups ops by input shape, most CPU total first', async ({ app, page }) => {
  await app.open('#tab=ops&shape=1&sort=cpu_total,desc');
  await expect(page.getByTestId('by-shape-toggle')).toBeChecked();
  await expect(page.getByTestId('col-input_shapes')).toBeVisible();
  await expect(page.getByTestId('col-cpu_total')).toHaveAttribute('data-sort', 'desc');
  const expected = cliReport(DEMO_TRACE, '--by-shape').ops;
  expect(await app.table()).toMatchObject({ kind: 'ops', byShape: true, rows: expected.length, sort: { key: 'cpu_total', desc: true } });
  const top = expected.reduce((a, b) => (b.cpu_total_us > a.cpu_total_us ? b : a));
  const [first] = await app.shownRows('op-row', 1);
  expect(first.name.title).toBe(top.name);
  expect(first.input_shapes.title).toBe(top.input_shapes);
  expect(Math.abs(first.cpu_total.value - top.cpu_total_us * 1e3)).toBeLessThanOrEqual(1);
});

test('#tab=findings&finding=dtod-before-gemm opens that finding active with its evidence outlined', async ({ app, page }) => {
  const finding = cliReport(DEMO_TRACE).findings.find((f) => f.rule === 'dtod-before-gemm');
  await app.open('#tab=findings&finding=dtod-before-gemm');
  await app.waitForTimeline();
  const item = page.locator('[data-testid="finding"][data-rule="dtod-before-gemm"]');
  await expect(item).toHaveAttribute('data-active', 'true');
  await expect(page.locator('[data-testid="finding"][data-active="true"]')).toHaveCount(1);
  expect(await page.evaluate(() => window.kinetoscope.findings.active)).toBe('dtod-before-gemm');
  // The link keeps its own view (here none: the whole trace, evidence included) and outlines
  // every evidence slice; it selects nothing the link did not name with `sel=`.
  const t = await app.timeline();
  expect(t.highlight).toBe(finding.evidence.slices.length);
  expect(t.selection).toBeNull();
  const [a, b] = finding.evidence.range_ns;
  expect(t.startNs).toBeLessThanOrEqual(a);
  expect(t.endNs).toBeGreaterThanOrEqual(b);
});

test('?url=&base= #tab=compare&cstep=10&csort=self_cpu_delta,asc&cksort=total_delta,desc shows that compare view', async ({ app, page }) => {
  const BASE = realFixture('param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json');
  const CAND = realFixture('param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json');
  const site = await serve({ '/k/': DIST, '/traces/d0.json': BASE, '/traces/d1.json': CAND });
  try {
    await page.goto(`${site.origin}/k/?url=../traces/d1.json&base=../traces/d0.json#tab=compare&cstep=10&csort=self_cpu_delta,asc&cksort=total_delta,desc`);
    await app.waitForLoads(2);
    await app.waitForStack();
    await expect(page.getByTestId('tab-compare')).toHaveClass(/active/);
    const c = await app.compare();
    expect(c.sort).toEqual({ key: 'self_cpu_delta', desc: false, abs: false });
    expect(c.kernelSort).toEqual({ key: 'total_delta', desc: true, abs: false });
    await expect(page.getByTestId('compare-ops').getByTestId('col-self_cpu_delta')).toHaveAttribute('data-sort', 'asc');
    await expect(page.getByTestId('compare-kernels').getByTestId('col-total_delta')).toHaveAttribute('data-sort', 'desc');

    // The rows a person sees follow those sorts, with the deltas `diff --json` computed.
    const diff = JSON.parse(execFileSync(CLI, ['diff', '--json', BASE, CAND], { encoding: 'utf8', maxBuffer: 256 << 20 }));
    const opDelta = Object.fromEntries(diff.ops.map((o) => [o.name, o.self_cpu_us.delta * 1e3]));
    const ops = await app.rows('compare-op-row');
    const opDeltas = ops.map((r) => r.self_cpu_delta);
    expect(opDeltas).toEqual([...opDeltas].sort((x, y) => x - y));
    for (const r of ops.slice(0, 5)) expect(Math.abs(r.self_cpu_delta - opDelta[r.name]), r.name).toBeLessThanOrEqual(1);
    const kernels = await app.rows('compare-kernel-row');
    const top = diff.kernels.reduce((x, y) => (y.total_us.delta > x.total_us.delta ? y : x));
    expect(kernels[0].name).toBe(top.name);
    expect(Math.abs(kernels[0].total_delta - top.total_us.delta * 1e3)).toBeLessThanOrEqual(1);

    // cstep=10: both stacked timelines start at ProfilerStep#10's CPU start in their own trace.
    await expect(page.getByTestId('compare-step')).toHaveValue('10');
    const startNs = (file) => cliReport(file).steps.find((s) => s.name === 'ProfilerStep#10').cpu_start_us * 1e3;
    expect(c.stack.step).toBe(10);
    expect(c.stack.baseStartNs).toBe(startNs(BASE));
    expect(c.stack.candStartNs).toBe(startNs(CAND));
  } finally {
    await site.close();
  }
});
