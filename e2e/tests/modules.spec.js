// Journey: read a with_stack trace's module tree on the Modules tab (H100 BERT, 84 nn.Module
// rows): every row (name, module id, depth, occurrences, CPU and GPU total and self) equals
// `kinetoscope report --modules --json`, row by row, both in `window.kinetoscope.modules` and
// in the table's cells; a row collapses and expands, headers sort siblings both ways, the
// filter keeps matches and their ancestors, and a row's click selects the module's first call
// on the timeline. Then the Steps table's phase columns equal `report --phases --json` on a
// trace without phase markers ("—" with the engine's reason) and on one with them (MI250 toy
// training), which has no nn.Module frames and says so on the Modules tab; the Charts tab's
// step bars stacked by phase (CPU and GPU time) equal the same JSON, part by part.
const { test, expect } = require('../pages/app');
const { realFixture, cliReport } = require('../support/fixtures');

const BERT = realFixture('tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz');
const MI250 = realFixture('hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz');

/** `window.kinetoscope.modules`. */
const modules = (app) => app.page.evaluate(() => window.kinetoscope.modules);

/** ns equals the report's µs (3 decimals written). */
function expectUs(ns, us, what) {
  expect(Math.abs(ns / 1e3 - us), `${what}: ${ns} ns vs ${us} µs`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(us)));
}

/** Rows (hook form) whose siblings, under each parent, are ordered by `key` (`desc` or not). */
function expectSiblingsSorted(rows, key, desc) {
  const open = [];
  const last = new Map();
  for (const r of rows) {
    open.length = r.depth;
    const parent = open.length ? open[open.length - 1] : -1;
    if (last.has(parent)) {
      const prev = last.get(parent);
      const ok = desc ? prev[key] >= r[key] : prev[key] <= r[key];
      expect(ok, `${prev.name} (${prev[key]}) then ${r.name} (${r[key]}) under ${parent}`).toBe(true);
    }
    last.set(parent, r);
    open.push(r.index);
  }
}

test('modules tab: every row equals report --modules --json; collapse, sort, filter, click selects', async ({ app }) => {
  await app.open();
  await app.upload(BERT);
  await app.openTab('modules');
  const want = cliReport(BERT, '--modules').modules;
  expect(want.nodes.length, 'BERT module rows').toBe(84);
  let m = await modules(app);
  expect(m).toMatchObject({ scope: 'trace', all: 84, backwardTied: want.backward_tied, sort: null, filter: '' });
  expect(m.rows.length).toBe(84);
  for (const [i, n] of want.nodes.entries()) {
    const r = m.rows[i];
    const what = `row ${i} (${n.path})`;
    expect([r.name, r.moduleId, r.depth, r.occurrences], what).toEqual([n.name, n.module_id, n.depth, n.occurrences]);
    expectUs(r.hostNs, n.host_us, `${what} CPU total`);
    expectUs(r.selfHostNs, n.self_host_us, `${what} CPU self`);
    expectUs(r.deviceNs, n.device_us, `${what} GPU total`);
    expectUs(r.selfDeviceNs, n.self_device_us, `${what} GPU self`);
  }
  // The cells as built, scrolled through: the same numbers, in the same order.
  const cells = await app.rows('module-row');
  expect(cells.length).toBe(84);
  for (const [i, n] of want.nodes.entries()) {
    const c = cells[i];
    expect(c.name, `cell row ${i}`).toBe(`nn.Module: ${n.name} (module id ${n.module_id})`);
    expect(c.occurrences).toBe(n.occurrences);
    expectUs(c.cpu_total, n.host_us, `cell row ${i} CPU total`);
    expectUs(c.cpu_self, n.self_host_us, `cell row ${i} CPU self`);
    expectUs(c.gpu_total, n.device_us, `cell row ${i} GPU total`);
    expectUs(c.gpu_self, n.self_device_us, `cell row ${i} GPU self`);
  }
  await expect(app.page.getByTestId('modules-backward-note')).toBeVisible();

  // Collapse the root: only it shows; expand it again: all 84.
  await app.page.getByTestId('module-table').scrollIntoViewIfNeeded();
  const root = app.page.getByTestId('module-row').first();
  await root.getByTestId('module-toggle').click();
  await app.idle();
  m = await modules(app);
  expect(m.rows.map((r) => [r.name, r.collapsed])).toEqual([['BertLMHeadModel_0', true]]);
  await expect(app.page.getByTestId('module-row')).toHaveCount(1);
  await root.getByTestId('module-toggle').click();
  await app.idle();
  expect((await modules(app)).rows.length).toBe(84);
  await app.page.getByTestId('module-collapse-all').click();
  await app.idle();
  expect((await modules(app)).rows.length).toBe(1);
  await app.page.getByTestId('module-expand-all').click();
  await app.idle();
  expect((await modules(app)).rows.length).toBe(84);

  // Sort by CPU total: descending, then ascending, siblings under their parent.
  for (const desc of [true, false]) {
    await app.page.getByTestId('col-cpu_total').click();
    await app.idle();
    m = await modules(app);
    expect(m.sort).toEqual({ key: 'cpu_total', desc });
    await expect(app.page.getByTestId('col-cpu_total')).toHaveAttribute('data-sort', desc ? 'desc' : 'asc');
    expect(m.rows.length).toBe(84);
    expectSiblingsSorted(m.rows, 'hostNs', desc);
  }
  // BertEncoder_0's three layers, largest CPU total first, then last.
  const layers = (rows) => rows.filter((r) => /^BertLayer_\d$/.test(r.name)).map((r) => r.name);
  const byHost = want.nodes.filter((n) => /^BertLayer_\d$/.test(n.name)).sort((a, b) => b.host_us - a.host_us).map((n) => n.name);
  expect(layers(m.rows)).toEqual([...byHost].reverse());

  // Filter: the matches and their ancestors, nothing else.
  await app.page.getByTestId('table-filter').fill('linear_1');
  await app.idle();
  m = await modules(app);
  const paths = want.nodes.map((n) => n.path);
  const keep = new Set();
  for (const p of paths.filter((p) => p.split('/').pop().toLowerCase().includes('linear_1'))) {
    const parts = p.split('/');
    for (let k = 1; k <= parts.length; k++) keep.add(parts.slice(0, k).join('/'));
  }
  const shownPaths = m.rows.map((r) => paths[r.index]);
  expect(new Set(shownPaths)).toEqual(keep);
  expect(m.rows.filter((r) => r.name.startsWith('Linear_1')).length).toBe(11);
  await app.page.getByTestId('table-filter').fill('');
  await app.idle();

  // A row's click selects the module's first call and searches its frame name.
  const target = (await modules(app)).rows.find((r) => r.name === 'BertEncoder_0');
  await app.page.getByTestId('module-table').scrollIntoViewIfNeeded();
  await app.page.locator(`[data-testid="module-row"][data-index="${target.index}"]`).click();
  await app.idle();
  const tl = await app.timeline();
  expect(tl.selection && tl.selection.id).toBe(target.firstId);
  expect(tl.selection.name).toBe('nn.Module: BertEncoder_0');
  expect(tl.search && tl.search.text).toBe('nn.Module: BertEncoder_0');
  expect(tl.search.total).toBeGreaterThanOrEqual(target.occurrences);
  await app.screenshot('modules-row-selects-call');
});

/** The Steps table's phase cells against `report --phases --json` (values in ns, "—" with the
 *  reason for a phase the trace cannot tell apart). */
async function expectPhases(app, file) {
  await app.openTab('steps');
  const want = cliReport(file, '--phases').phases;
  const rows = await app.shownRows('step-row', want.steps.length);
  for (const [i, s] of want.steps.entries()) {
    const row = rows[i];
    expect(row.step.value, `row ${i} step`).toBe(s.step);
    for (const ph of ['data_loading', 'forward', 'backward', 'optimizer']) {
      for (const side of ['cpu', 'gpu']) {
        const cell = row[`phase_${ph}_${side}`];
        const what = `step ${s.step} ${ph} ${side}`;
        if (want.not_told_apart.includes(ph)) {
          expect(cell.text, what).toBe('—');
          expect(cell.title, what).toMatch(/cannot be told/);
        } else {
          expectUs(cell.value, s[`${side}_us`][ph], what);
        }
      }
    }
    expectUs(row.comm_exposed.value, s.communication_exposed_us, `step ${s.step} exposed comm`);
  }
  return want;
}

test('steps table: phase columns equal report --phases --json, "—" where the trace has no markers', async ({ app }) => {
  await app.open();
  await app.upload(BERT);
  const bert = await expectPhases(app, BERT);
  expect(bert.not_told_apart).toEqual(['data_loading', 'backward', 'optimizer']);
  await expect(app.page.getByTestId('col-phase_backward_cpu')).toHaveAttribute('title', /fwdbwd/);

  await app.upload(MI250);
  const mi = await expectPhases(app, MI250);
  expect(mi.not_told_apart).toEqual(['data_loading']);
  expect(mi.steps.length).toBe(2);
  // No nn.Module frames: the Modules tab says so and how to record them.
  await app.openTab('modules');
  await expect(app.page.getByTestId('modules-unavailable')).toContainText('with_stack=True');
  expect((await modules(app)).all).toBe(0);
});

/** A digest of canvas `testId`'s pixels (changes when anything drawn changes). */
const digest = (app, testId) =>
  app.page.getByTestId(testId).evaluate((canvas) => {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let h = 0;
    for (let i = 0; i < data.length; i += 4) h = (h * 31 + data[i] + 7 * data[i + 1] + 13 * data[i + 2]) | 0;
    return h;
  });

test('step chart: stacked by phase, CPU and GPU, each bar part equals report --phases --json', async ({ app }) => {
  await app.open();
  await app.upload(MI250);
  await app.openTab('charts');
  await app.idle();
  const want = cliReport(MI250, '--phases').phases;
  const byCategory = await digest(app, 'chart-steps');
  for (const [mode, side] of [['phase_gpu', 'gpu'], ['phase_cpu', 'cpu']]) {
    await app.page.getByTestId('chart-steps-stack').selectOption(mode);
    await expect.poll(() => app.page.evaluate(() => window.kinetoscope.charts.stepStack)).toBe(mode);
    const bars = await app.page.evaluate(() => window.kinetoscope.charts.stepBars);
    expect(bars.length, mode).toBe(want.steps.length);
    for (const [i, s] of want.steps.entries()) {
      expect(bars[i].step, `${mode} bar ${i}`).toBe(s.step);
      for (const ph of ['forward', 'backward', 'optimizer']) {
        expectUs(bars[i].parts[`phase_${ph}_${side}`], s[`${side}_us`][ph], `${mode} step ${s.step} ${ph}`);
      }
      // Data loading has no DataLoader span here: its column is empty, drawn as nothing.
      expect(bars[i].parts[`phase_data_loading_${side}`], `${mode} step ${s.step} data loading`).toBe(0);
      if (side === 'gpu') expectUs(bars[i].parts.comm_exposed, s.communication_exposed_us, `step ${s.step} exposed comm`);
    }
    await expect(app.page.getByTestId('chart-steps-note')).toContainText('DataLoader');
    expect(await digest(app, 'chart-steps'), `${mode} redraws the bars`).not.toBe(byCategory);
  }
  await app.screenshot('charts-steps-by-phase');
  await app.page.getByTestId('chart-steps-stack').selectOption('category');
  await expect(app.page.getByTestId('chart-steps-note')).toHaveCount(0);
});
