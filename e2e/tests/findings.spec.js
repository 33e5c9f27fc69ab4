// Journey: the cheatsheet. The page lists the same findings as `kinetoscope report --json`;
// each shows why (the numbers its rule compared); clicking one zooms the timeline to its
// evidence, outlines it and selects its first slice (evidence is most telling first).
const { test, expect, AppPage } = require('../pages/app');
const { realFixture, cliReport, DEMO_TRACE } = require('../support/fixtures');

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
  const item = await app.finding('dtod-before-gemm');
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

test('the cheatsheet shows report --json findings: count line, severities, titles', async ({ app, page }) => {
  const file = realFixture(PARTX);
  const expected = cliReport(file).findings;
  await app.open();
  await app.upload(file);
  await app.openTab('findings');
  const n = (sev) => expected.filter((f) => f.severity === sev).length;
  await expect(page.getByTestId('finding-count'))
    .toHaveText(`${n('alert')} alerts · ${n('warn')} warnings · ${n('info')} notes — click one to see its evidence on the timeline`);
  const items = page.getByTestId('finding');
  await expect(items).toHaveCount(expected.length);
  const shown = await items.evaluateAll((els) => els.map((e) => ({
    rule: e.dataset.rule,
    severity: e.dataset.severity,
    badge: e.querySelector('.badge').textContent,
    title: e.querySelector('.finding-title').textContent,
  })));
  expect(shown).toEqual(expected.map((f) => ({ rule: f.rule, severity: f.severity, badge: f.severity, title: f.title })));
});

test("each finding's evidence selects its first slice and the details panel shows it", async ({ app, page }) => {
  const file = realFixture(PARTX);
  const expected = cliReport(file).findings;
  await app.open();
  await app.upload(file);
  await app.waitForTimeline();
  await app.openTab('findings');
  for (const f of expected) {
    const item = await app.finding(f.rule);
    await item.click();
    await app.idle();
    await expect(item).toHaveAttribute('data-active', 'true');
    const t = await app.timeline();
    expect(t.selection && t.selection.id, `${f.rule}: selected slice`).toBe(f.evidence.slices[0]);
    await expect(app.details, f.rule).toHaveAttribute('data-slice', String(f.evidence.slices[0]));
    await expect(page.getByTestId('detail-name'), f.rule).toHaveText(t.selection.name);
    expect(t.highlight, `${f.rule}: slices outlined`).toBe(f.evidence.slices.length);
  }
});

test("a finding's \"link to this finding\" opens a page with that finding active and its evidence outlined", async ({ app, page, context }) => {
  const finding = cliReport(DEMO_TRACE).findings.find((f) => f.rule === 'fp32-gemm');
  await app.open();
  await app.waitForTimeline();
  await app.openTab('findings');
  const href = await page.locator('[data-testid="finding"][data-rule="fp32-gemm"]').getByTestId('finding-link').getAttribute('href');
  expect(href).toContain('finding=fp32-gemm');
  const other = new AppPage(await context.newPage());
  await other.page.goto(href);
  await other.waitForLoads(1);
  await other.waitForTimeline();
  await expect(other.page.locator('[data-testid="finding"][data-active="true"]')).toHaveAttribute('data-rule', 'fp32-gemm');
  expect((await other.timeline()).highlight).toBe(finding.evidence.slices.length);
  expect(other.pageErrors).toEqual([]);
});
