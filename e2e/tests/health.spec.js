// Journey: read a trace's health in the Summary tab. Every check's count, denominator and
// examples equal `kinetoscope info --json`'s `health`; clicking an example selects that slice and
// brings it into view on the timeline. SGLang on MI300: 456 of 558 kernels start after the last
// host slice (the one hipGraphLaunch's replay runs on), the check that fires there. The same
// trace has no ProfilerStep#N: the Steps tab and the Findings tab say so (the demo, with steps,
// is the near miss).
const { test, expect } = require('../pages/app');
const { realFixture, cliInfo, cliReport, DEMO_TRACE } = require('../support/fixtures');

const SGLANG = 'tracelens__sglang_Qwen3-8B_decode.json.gz';
const CHECKS = ['launches_without_activity', 'activities_without_launch', 'outside_window', 'stream_overlaps', 'before_launch'];

test('health block equals info --json and its examples select their slice', async ({ app, page }) => {
  await app.open();
  const file = realFixture(SGLANG);
  await app.upload(file);
  await app.waitForTimeline();
  const health = cliInfo(file).health;
  await app.openTab('summary');
  const rows = page.getByTestId('health-row');
  await expect(rows).toHaveCount(CHECKS.length);
  for (const key of CHECKS) {
    const row = page.locator(`[data-testid="health-row"][data-key="${key}"]`);
    await expect(row, key).toHaveAttribute('data-count', String(health[key].count));
    await expect(row, key).toHaveAttribute('data-of', String(health[key].of));
    const shown = await row.getByTestId('health-example').evaluateAll((els) => els.map((e) => Number(e.dataset.slice)));
    expect(shown, key).toEqual(health[key].examples);
  }
  expect(health.outside_window.count).toBe(456);
  const offset = page.getByTestId('health-clock-offset');
  if (health.clock_offset_us === null) await expect(offset).toHaveCount(0);
  else await expect(offset).toHaveAttribute('data-value', String(health.clock_offset_us));

  const first = health.outside_window.examples[0];
  await page.locator(`[data-testid="health-row"][data-key="outside_window"] [data-testid="health-example"]`).first().click();
  await app.idle();
  await expect(page.getByTestId('details-panel')).toHaveAttribute('data-slice', String(first));
  // Brought into view: the view holds the slice's start.
  const t = await app.timeline();
  expect(t.selection.id).toBe(first);
  expect(t.startNs <= t.selection.startNs && t.selection.startNs <= t.endNs).toBe(true);
});

test('a trace without steps says why the Steps tab is empty and which rules did not run', async ({ app, page }) => {
  await app.open();
  const file = realFixture(SGLANG);
  await app.upload(file);
  await app.waitForTimeline();
  const report = cliReport(file);
  expect(report.steps).toEqual([]);
  expect(report.unavailable.steps).toContain('no ProfilerStep#N');
  await app.openTab('steps');
  await expect(page.getByTestId('steps-unavailable')).toContainText('No ProfilerStep#N in this trace');
  await app.openTab('findings');
  const note = page.getByTestId('findings-no-steps');
  for (const rule of ['cold-start-step', 'kernel-time-variance', 'recompilation', 'slow-step']) {
    await expect(note).toContainText(rule);
  }
  // Near miss: the demo has steps, and neither note shows.
  await app.upload(DEMO_TRACE);
  await app.waitForTimeline();
  await expect(page.getByTestId('findings-no-steps')).toHaveCount(0);
  await app.openTab('steps');
  await expect(page.getByTestId('steps-unavailable')).toHaveCount(0);
});
