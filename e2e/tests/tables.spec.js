// Journey: load a trace, switch to the Ops / Kernels / Steps tabs, sort by a header, filter by
// name, group ops by input shape. Expected numbers come from PyTorch itself (the torch-cpu
// fixture's key_averages: 6 rows by name, 10 by input shape, aten::mm on top by Self CPU).
// State is read from `window.kinetoscope.table`; waits are on `idle()` (queries included).
const { test, expect } = require('../pages/app');
const { realFixture, torchCpuFixture } = require('../support/fixtures');

test('ops table: PyTorch key_averages rows, sort, filter and group by input shape', async ({ app }) => {
  await app.open();
  await app.upload(torchCpuFixture('matmul_add.pt.trace.json'));
  await expect(app.page.getByTestId('tab-summary')).toBeVisible();
  await app.openTab('ops');
  const table = app.page.getByTestId('op-table');
  await expect(table).toBeVisible();
  const rows = app.page.getByTestId('op-row');
  await expect(rows).toHaveCount(6);
  let t = await app.table();
  expect(t).toMatchObject({ kind: 'ops', rows: 6, sort: { key: 'self_cpu', desc: true } });
  await expect(rows.first().locator('td[data-key="name"]')).toHaveText('aten::mm');
  const selfCpu = await app.column('op-row', 'self_cpu');
  expect([...selfCpu].sort((a, b) => b - a)).toEqual(selfCpu);
  // At 1280 px the percent, work and memory columns start hidden (app/src/state/columns.rs); the
  // Columns menu shows them, and the choice is kept for the next visit (localStorage).
  for (const key of ['name', 'self_cpu', 'cpu_total', 'cpu_avg', 'self_cuda', 'cuda_total', 'cuda_avg', 'calls']) {
    await expect(app.page.getByTestId(`col-${key}`)).toBeVisible();
  }
  for (const key of ['self_cpu_pct', 'cpu_total_pct', 'self_cuda_pct', 'flops', 'bytes', 'achieved_tflops', 'achieved_gbps',
    'cpu_mem', 'self_cpu_mem', 'cuda_mem', 'self_cuda_mem']) {
    await expect(app.page.getByTestId(`col-${key}`)).toHaveCount(0);
  }
  await app.showColumns('self_cpu_pct', 'cpu_total_pct', 'self_cuda_pct', 'cpu_mem', 'self_cpu_mem');
  expect(await app.page.evaluate(() => localStorage.getItem('kinetoscope.columns.ops')))
    .toBe('achieved_gbps,achieved_tflops,bytes,cuda_mem,flops,self_cuda_mem');
  await app.screenshot('tables-ops');

  // Sort by # of Calls: descending first, then ascending.
  await app.page.getByTestId('col-calls').click();
  await app.idle();
  t = await app.table();
  expect(t.sort).toEqual({ key: 'calls', desc: true });
  const calls = await app.column('op-row', 'calls');
  expect(calls).toEqual([...calls].sort((a, b) => b - a));
  expect(calls[0]).toBe(30); // aten::resolve_conj
  await app.page.getByTestId('col-calls').click();
  await app.idle();
  t = await app.table();
  expect(t.sort).toEqual({ key: 'calls', desc: false });
  const asc = await app.column('op-row', 'calls');
  expect(asc).toEqual([...asc].sort((a, b) => a - b));

  // Filter by name.
  await app.tableFilter.fill('add');
  await expect(rows).toHaveCount(2);
  const names = await app.column('op-row', 'name');
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) expect(name).toContain('add');
  expect((await app.table()).rows).toBe(names.length);
  await app.tableFilter.fill('');
  await expect(rows).toHaveCount(6);

  // Group by input shape: PyTorch's by-shape table has 10 rows.
  await app.byShapeToggle.check();
  await app.idle();
  await expect(rows).toHaveCount(10);
  t = await app.table();
  expect(t).toMatchObject({ kind: 'ops', rows: 10, byShape: true, pending: false });
  await expect(app.page.getByTestId('col-input_shapes')).toBeVisible();
  await app.byShapeToggle.uncheck();
  await app.idle();
  await expect(rows).toHaveCount(6);
});

test('kernel table of a GPU trace is sorted by total time', async ({ app }) => {
  await app.open();
  await app.upload(realFixture('partx__profiler_trace_single_sample.json'));
  await app.openTab('kernels');
  await expect(app.page.getByTestId('kernel-table')).toBeVisible();
  const rows = await app.rows('kernel-row');
  expect(rows.length).toBeGreaterThan(1);
  const t = await app.table();
  expect(t).toMatchObject({ kind: 'kernels', sort: { key: 'total', desc: true } });
  expect(t.rows).toBe(rows.length);
  const totals = await app.column('kernel-row', 'total');
  expect(totals[0]).toBeGreaterThanOrEqual(totals[1]);
  expect(totals).toEqual([...totals].sort((a, b) => b - a));
  await app.screenshot('tables-kernels');
});

test('step table of the demo lists its 5 steps in order', async ({ app }) => {
  await app.open();
  await app.openTab('steps');
  await expect(app.page.getByTestId('step-table')).toBeVisible();
  await expect(app.page.getByTestId('step-row')).toHaveCount(5);
  const t = await app.table();
  expect(t).toMatchObject({ kind: 'steps', rows: 5, sort: null });
  const steps = await app.column('step-row', 'step');
  expect(steps).toEqual([...steps].sort((a, b) => a - b));
  await app.screenshot('tables-steps');

  // Back to the summary: no table state; a table tab survives a new load and re-queries.
  await app.openTab('summary');
  expect(await app.table()).toBeNull();
  await expect(app.glance).toBeVisible();
  await app.openTab('ops');
  await app.upload(torchCpuFixture('matmul_add.pt.trace.json'));
  await app.idle();
  await expect(app.page.getByTestId('op-row')).toHaveCount(6);
});

test('op table scoped to one profiler step equals `report --step`', async ({ app, page }) => {
  const { cliReport, DEMO_TRACE } = require('../support/fixtures');
  await app.open();
  await app.openTab('ops');
  const steps = cliReport(DEMO_TRACE).steps;
  const step = Number(steps[2].name.split('#')[1]);
  await page.getByTestId('table-scope').selectOption('step');
  await app.idle();
  // "One profiler step" starts at the first; the number box picks another.
  await expect(page.getByTestId('table-step')).toHaveValue(String(Number(steps[0].name.split('#')[1])));
  await app.pickStep('table-step', step);
  expect((await app.table()).scope).toBe('step');
  await expect(page.getByTestId('table-step')).toHaveValue(String(step));
  const names = await app.column('op-row', 'name');
  const calls = await app.column('op-row', 'calls');
  const expected = cliReport(DEMO_TRACE, '--step', String(step)).ops;
  expect(Object.fromEntries(names.map((n, i) => [n, calls[i]])))
    .toEqual(Object.fromEntries(expected.map((o) => [o.name, o.calls])));
  await app.screenshot('tables-ops-step');

  // Next / previous move one step.
  await page.getByTestId('table-step-next').click();
  await app.idle();
  await expect(page.getByTestId('table-step')).toHaveValue(steps[3].name.split('#')[1]);
  expect(await app.column('op-row', 'calls')).toHaveLength(cliReport(DEMO_TRACE, '--step', steps[3].name.split('#')[1]).ops.length);
  await page.getByTestId('table-step-prev').click();
  await app.idle();
  await expect(page.getByTestId('table-step')).toHaveValue(String(step));
});
