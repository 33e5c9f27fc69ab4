// Journey: "why is this step slow?" On the resnet50 trace, open the Steps tab: the slowest
// step's explanation shows, its sentences are the CLI's (`report --explain-step slowest
// --json`), its links select the evidence on the timeline, and clicking another step row
// explains that step instead. (Its main-thread long tasks are a benchmark's:
// journeys-bench.spec.js.)
const { test, expect } = require('../pages/app');
const { realFixture, cliReport } = require('../support/fixtures');

const RESNET = 'kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz';

/** The sentences shown, as text (without their "show" buttons). */
async function sentences(page) {
  return page.locator('[data-testid="step-explain-sentence"] > span').allTextContents();
}

/** The selected slice's id and the details panel's name once it shows `name`. */
async function expectSelected(app, id, name) {
  await app.idle();
  await expect(app.page.getByTestId('detail-name')).toHaveText(name);
  const selection = await app.page.evaluate(() => window.kinetoscope.timeline.selection);
  expect(selection).toMatchObject({ id, name });
}

test('the slowest step is explained, its links select the evidence, another row explains that step', async ({ app }) => {
  const file = realFixture(RESNET);
  const slowest = cliReport(file, '--explain-step', 'slowest').explanation;
  await app.open();
  await app.upload(file);
  await app.openTab('steps');

  // The slowest step by default, in the CLI's words.
  const panel = app.page.getByTestId('step-explain');
  await expect(panel).toHaveAttribute('data-step', String(slowest.step));
  expect(await sentences(app.page)).toEqual(slowest.sentences);
  const hook = await app.page.evaluate(() => window.kinetoscope.explain);
  expect(hook).toMatchObject({ asked: null, step: slowest.step, sentences: slowest.sentences, error: null, pending: false });
  const evidence = [...slowest.kernels.map((k) => ({ kind: 'kernel', ...k })), ...slowest.ops.map((o) => ({ kind: 'op', ...o }))]
    .filter((i) => i.slice !== null);
  expect(hook.evidence).toEqual(evidence.map((i) => ({ kind: i.kind, name: i.name, slice: i.slice })));
  expect(evidence.length).toBeGreaterThan(0);
  const rows = app.page.getByTestId('step-explain-row');
  await expect(rows).toHaveCount(slowest.categories.length + slowest.kernels.length + slowest.ops.length);
  const selectedRow = app.page.locator(`[data-testid="step-row"][data-selected="true"]`);
  await expect(selectedRow.locator('td[data-key="step"]')).toHaveAttribute('data-value', String(slowest.step));
  await app.screenshot('explain-slowest');

  // The first link selects the CLI's evidence slice; the first sentence's selects the step.
  await app.page.getByTestId('step-explain-link').first().click();
  await expectSelected(app, evidence[0].slice, evidence[0].name);
  await app.page.getByTestId('step-explain-cite').first().click();
  await expectSelected(app, slowest.slice, `ProfilerStep#${slowest.step}`);
  await app.screenshot('explain-evidence');

  // Another step row explains that step.
  const other = (await app.column('step-row', 'step')).find((n) => n !== slowest.step);
  const expected = cliReport(file, '--explain-step', String(other)).explanation;
  await app.page.locator(`[data-testid="step-row"]:has(td[data-key="step"][data-value="${other}"])`).click();
  await app.idle();
  await expect(panel).toHaveAttribute('data-step', String(other));
  expect(await sentences(app.page)).toEqual(expected.sentences);
  await expect(selectedRow.locator('td[data-key="step"]')).toHaveAttribute('data-value', String(other));
  await app.screenshot('explain-other');
});

test('the only complete step is not compared with itself: its own numbers, no median or Δ', async ({ app }) => {
  const file = realFixture('param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json');
  const only = cliReport(file, '--explain-step', 'slowest').explanation;
  await app.open();
  await app.upload(file);
  await app.openTab('steps');
  const panel = app.page.getByTestId('step-explain');
  await expect(panel).toHaveAttribute('data-step', String(only.step));
  expect(await sentences(app.page)).toEqual(only.sentences);
  await expect(panel).toContainText('The only complete step: nothing to compare it with');
  await expect(panel).not.toContainText('Against the median');
  const table = panel.locator('table.explain-table');
  await expect(table).toHaveAttribute('data-alone', 'true');
  expect(await table.locator('thead th').allTextContents()).toEqual(['', 'name', 'step', 'calls']);
  // Its categories, then its own largest kernels and ops: kind, name, the step's own time and
  // its calls (none for a category); four cells each, no median or Δ cell.
  const rows = app.page.getByTestId('step-explain-row');
  expect(only.kernels.length).toBeGreaterThan(0);
  await expect(rows).toHaveCount(only.categories.length + only.kernels.length + only.ops.length);
  expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.cells.length))).toEqual(Array(await rows.count()).fill(4));
  const first = only.kernels[0];
  const row = rows.filter({ has: app.page.locator('td.muted', { hasText: 'kernel' }) }).first();
  await expect(row).toHaveAttribute('data-name', first.name);
  await expect(row.locator('td').nth(3)).toHaveText(String(first.step_calls));
  await app.screenshot('explain-only-step');
});
