// The Summary tab leads with the trace at a glance (issue 45): GPU, rank of world size, step
// time, GPU metrics, what bounds the steps, the top three findings and health in one line, the
// same numbers as `info --json` / `report --json` on the same file; parse statistics folded
// below. At 1440 and 800 px: no card overflows horizontally. Screenshots:
// e2e/test-results/glance-*.png.
const { test, expect } = require('../pages/app');
const { realFixture, cliInfo, cliReport } = require('../support/fixtures');

const DLRM = realFixture('param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json');
const RESNET = realFixture('kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz');

/** The critical-path class with the most path time over every step of `report`. */
function boundBy(report) {
  const total = {};
  for (const s of report.critical_path.steps) {
    for (const [k, v] of Object.entries(s.shares_us)) total[k] = (total[k] || 0) + v;
  }
  const all = Object.values(total).reduce((a, b) => a + b, 0);
  const [cls, us] = Object.entries(total).sort((a, b) => b[1] - a[1])[0];
  return { cls, pct: (100 * us) / all };
}

/** Checks the glance of `file` against the CLI, then that no card overflows. */
async function expectGlance(app, file, width, shot) {
  await app.page.setViewportSize({ width, height: 900 });
  await app.upload(file);
  await app.idle();
  const info = cliInfo(file);
  const report = cliReport(file);
  const glance = app.glance;
  await expect(glance).toBeVisible();

  // GPU and rank: `info --json`'s about.
  const gpus = glance.getByTestId('glance-gpu');
  await expect(gpus).toHaveCount(info.about.devices.length);
  for (const [k, d] of info.about.devices.entries()) {
    await expect(gpus.nth(k)).toHaveAttribute('data-name', d.name);
  }
  if (info.about.distributed) {
    await expect(glance.getByTestId('glance-rank')).toHaveAttribute('data-world', String(info.about.distributed.world_size));
  }

  // Steps, GPU metrics and what bounds the steps: `report --json`.
  const steps = glance.getByTestId('glance-steps');
  await expect(steps).toHaveAttribute('data-count', String(report.step_stats.count), { timeout: 30000 });
  const mean = Number(await glance.getByTestId('glance-step-mean').getAttribute('data-value'));
  const p95 = Number(await glance.getByTestId('glance-step-p95').getAttribute('data-value'));
  expect(mean).toBeCloseTo(report.step_stats.mean_us, 3);
  expect(p95).toBeCloseTo(report.step_stats.p95_us, 3);
  for (const g of report.gpus) {
    const cell = glance.locator(`[data-testid="glance-gpu-metrics"] tr[data-device="${g.device}"] td[data-key="utilization_pct"]`);
    expect(Number(await cell.getAttribute('data-value'))).toBeCloseTo(g.utilization_pct, 6);
  }
  const bound = boundBy(report);
  const shown = glance.getByTestId('glance-bound');
  await expect(shown).toHaveAttribute('data-class', bound.cls);
  expect(Number(await shown.getAttribute('data-share'))).toBeCloseTo(bound.pct, 6);

  // The first three findings, in the report's order.
  const rules = report.findings.slice(0, 3).map((f) => f.rule);
  const listed = glance.getByTestId('glance-finding');
  await expect(listed).toHaveCount(rules.length, { timeout: 30000 });
  expect(await listed.evaluateAll((els) => els.map((e) => e.dataset.rule))).toEqual(rules);
  await expect(glance.getByTestId('glance-health')).toContainText('Trace health:');

  // Parse statistics are folded; nothing on the tab overflows its card.
  await expect(app.parseStats).not.toHaveAttribute('open', '');
  await app.openParseStats();
  await expect(app.summaryEvents).toBeVisible();
  const overflow = await app.page.evaluate(() => [...document.querySelectorAll('.card, .trace-header')]
    .filter((e) => e.offsetParent !== null && e.scrollWidth > e.clientWidth)
    .map((e) => `${e.className} "${(e.querySelector('h2, summary') || e).textContent.slice(0, 40)}" ${e.scrollWidth} > ${e.clientWidth}`));
  expect(overflow, `cards wider than their box at ${width} px`).toEqual([]);
  await app.screenshot(shot);
  return rules;
}

for (const width of [1440, 800]) {
  test(`the summary leads with the trace at a glance, equal to the CLI (${width} px)`, async ({ app }) => {
    await app.open();
    await expectGlance(app, DLRM, width, `glance-dlrm-${width}`);
    await expectGlance(app, RESNET, width, `glance-resnet50-${width}`);
  });
}

test('a top finding opens the Findings tab with that finding active', async ({ app }) => {
  await app.open();
  await app.upload(RESNET);
  await app.idle();
  const first = app.glance.getByTestId('glance-finding').first();
  const rule = await first.getAttribute('data-rule');
  await first.locator('a').click();
  await expect(app.page.locator(`[data-testid="finding"][data-rule="${rule}"]`)).toHaveAttribute('data-active', 'true');
});
