// Journey: the cheatsheet. The page lists the same findings as `kinetoscope report --json`;
// each shows why (the numbers its rule compared); clicking one zooms the timeline to its
// evidence, outlines it and selects its first slice (evidence is most telling first).
const { test, expect } = require('../pages/app');
const { realFixture, cliReport } = require('../support/fixtures');

const PARTX = 'partx__profiler_trace_single_sample.json';

test('findings equal the CLI and clicking one shows its evidence on the timeline', async ({ app, page }) => {
  await app.open();
  const file = realFixture(PARTX);
  await app.upload(file);
  await app.waitForTimeline();
  const expected = cliReport(file).findings;
  await app.openTab('findings');
  const items = page.getByTestId('finding');
  await expect(items).toHaveCount(expected.length);
  const rules = await items.evaluateAll((els) => els.map((e) => e.dataset.rule));
  expect(rules).toEqual(expected.map((f) => f.rule));
  expect(await page.evaluate(() => window.kinetoscope.findings.rules)).toEqual(rules);

  const dtod = expected.find((f) => f.rule === 'dtod-before-gemm');
  expect(dtod).toBeTruthy();
  const item = page.locator('[data-testid="finding"][data-rule="dtod-before-gemm"]');
  // "Why we think so": the numbers the rule compared, as the CLI prints them.
  await expect(item.getByTestId('finding-why')).toHaveText(dtod.why);
  await item.click();
  await app.idle();
  await expect(item).toHaveAttribute('data-active', 'true');
  const t = await app.timeline();
  expect(t.highlight).toBe(dtod.evidence.slices.length);
  expect(t.selection.id).toBe(dtod.evidence.slices[0]);
  const [a, b] = dtod.evidence.range_ns;
  expect(t.startNs).toBeLessThanOrEqual(a);
  expect(t.endNs).toBeGreaterThanOrEqual(b);
  await app.screenshot('findings-dtod-before-gemm');
});
