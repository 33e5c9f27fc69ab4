// Journey: compare two traces (issue #8). Load the baseline, "Compare with…" the candidate:
// the verdict, summary, op and kernel diffs and findings diff appear, numbers as
// `kinetoscope diff --json` gives them; sorting by a delta orders rows. Then the share-link form
// `?url=CAND&base=BASE` with the same trace on both sides: every row `same`, every delta 0.
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { test, expect } = require('../pages/app');
const { CLI, RESULTS_DIR, realFixture } = require('../support/fixtures');

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
  expect(c).toMatchObject({ base: path.basename(base), cand: path.basename(cand), pending: false, sort: null });
  expect(c.verdict).toBe(cli.verdict.text);
  await expect(app.page.getByTestId('compare-verdict')).toHaveText(cli.verdict.text);
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

  const ops = app.page.getByTestId('compare-op-row');
  await expect(ops).toHaveCount(cli.ops.length);
  // The CLI orders rows by |Δ Self CUDA|, the page keeps the worker's order: compare as sets.
  const statuses = await ops.evaluateAll((trs) => trs.map((tr) => `${tr.dataset.status} ${tr.querySelector('td[data-key="name"]').textContent}`));
  expect(statuses.sort()).toEqual(cli.ops.map((r) => `${r.status} ${r.name}`).sort());
  await expect(app.page.getByTestId('compare-kernel-row')).toHaveCount(cli.kernels.length);
  await expect(app.page.getByTestId('compare-findings')).toBeVisible();
  // The page is tens of thousands of px tall with every row: shoot the panel's top in the viewport.
  await panel.scrollIntoViewIfNeeded();
  await panel.evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await app.page.screenshot({ path: path.join(RESULTS_DIR, 'compare-dlrm.png') });

  // Sort the op diff by Δ Self CUDA: descending, then ascending.
  const header = app.page.getByTestId('compare-ops').getByTestId('col-self_cuda_delta');
  await header.click();
  await expect(header).toHaveAttribute('data-sort', 'desc');
  c = await app.compare();
  expect(c.sort).toEqual({ key: 'self_cuda_delta', desc: true });
  const desc = await app.column('compare-op-row', 'self_cuda_delta');
  expect(desc.length).toBe(cli.ops.length);
  expect(desc).toEqual([...desc].sort((a, b) => b - a));
  expect(desc[0] / 1000).toBeCloseTo(Math.max(...cli.ops.map((r) => r.self_device_us.delta)), 6);
  await header.click();
  await expect(header).toHaveAttribute('data-sort', 'asc');
  const asc = await app.column('compare-op-row', 'self_cuda_delta');
  expect(asc).toEqual([...asc].sort((a, b) => a - b));

  // Kernels sort on their own.
  const kHeader = app.page.getByTestId('compare-kernels').getByTestId('col-total_delta');
  await kHeader.click();
  c = await app.compare();
  expect(c.kernelSort).toEqual({ key: 'total_delta', desc: true });
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
  const ops = app.page.getByTestId('compare-op-row');
  await expect(ops).toHaveCount(c.ops);
  const statuses = await ops.evaluateAll((trs) => trs.map((tr) => tr.dataset.status));
  expect(new Set(statuses)).toEqual(new Set(['same']));
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
