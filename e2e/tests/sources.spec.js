// Journey: from a Triton kernel to its source. On the HTA Triton example, the op
// `triton_poi_fused_add_cos_sin_0` and the kernel it launched both show the op's `kernel_file`
// in the details panel, the same file `report --json` gives the kernel row; opened with
// `?src=BASE` the file is a link to BASE + path. The trace's `kernel_file` is also read here
// from the JSON, so the check is not the engine against itself. The kernel table's Source column
// shows it too (empty for the demo's kernels, which aten ops launched).
const fs = require('node:fs');
const zlib = require('node:zlib');
const { test, expect } = require('../pages/app');
const { realFixture, cliReport, DEMO_TRACE } = require('../support/fixtures');

const TRITON = 'hta__triton_example.json.gz';
const KERNEL = 'triton_poi_fused_add_cos_sin_0';
const BASE = 'https://src.example/view';

test('a Triton kernel and its op show the kernel_file, linked with ?src=', async ({ app, page }) => {
  await app.open(`?src=${encodeURIComponent(BASE)}`);
  const file = realFixture(TRITON);
  const events = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)).toString('utf8')).traceEvents;
  const op = events.find((e) => e.cat === 'cpu_op' && e.args && e.args.kernel_file);
  const row = cliReport(file).kernels.find((k) => k.name === KERNEL);
  expect(row.source.file).toBe(op.args.kernel_file);
  await app.upload(file);
  await app.waitForTimeline();
  await app.searchInput.fill(KERNEL);
  await app.idle();
  const cats = [];
  for (let n = 0; n < 2; n += 1) {
    await app.searchInput.press('Enter');
    await app.idle();
    const sel = (await app.timeline()).selection;
    expect(sel.name).toBe(KERNEL);
    cats.push(sel.args.correlation === undefined ? 'op' : 'kernel');
    const source = page.getByTestId('detail-source');
    await expect(source).toHaveAttribute('data-file', op.args.kernel_file);
    await expect(source.getByTestId('detail-source-link')).toHaveAttribute('href', BASE + op.args.kernel_file);
  }
  expect(cats.sort()).toEqual(['kernel', 'op']);
});

test('the kernel table shows a Triton kernel\'s source file', async ({ app }) => {
  await app.open();
  const file = realFixture(TRITON);
  await app.upload(file);
  await app.openTab('kernels');
  // Hidden by default at this width (app/src/state/columns.rs); the choice stays for the demo below.
  await app.showColumns('source');
  const want = cliReport(file).kernels.find((k) => k.name === KERNEL).source.file;
  const rows = await app.rows('kernel-row');
  const row = rows.find((r) => r.name === KERNEL);
  expect(row.source).toBe(want);
  // Near miss: the demo's kernels, launched by aten ops, have no source.
  await app.upload(DEMO_TRACE);
  await app.openTab('kernels');
  const demo = await app.rows('kernel-row');
  expect(demo.length).toBeGreaterThan(0);
  expect(demo.every((r) => r.source === '—')).toBe(true);
});
