// Journey: what a new user trips on, at 1440 and 800 px. The op table's default columns fit
// the width (Name, the sorted column and Calls in view), a column choice is kept in
// localStorage and a column is resized by dragging its header's edge; scrolled sideways, a table keeps its Name column; kernel names that share a long prefix show the part that tells them apart (the
// whole name in `title`); the table's name filter travels in the share link to a fresh browser
// context; a file with no events says why the timeline is empty, and a cut-short file says where
// it stopped; the search box shows its whole placeholder; the GPU chart's legend says what each
// series measures; a folder without a trace file says nothing was opened (several files are a
// run: run.spec.js). Screenshots: e2e/test-results/first-use-*.png.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, expect, AppPage } = require('../pages/app');
const { realFixture, cliInfo, RESULTS_DIR } = require('../support/fixtures');

const WIDTHS = [1440, 800];
const PARTX = 'partx__profiler_trace_single_sample.json';

for (const width of WIDTHS) {
  test(`at ${width} px: the Name column stays when a table scrolls sideways; kernel names tell apart`, async ({ app, page }) => {
    await page.setViewportSize({ width, height: 900 });
    await app.open();
    await app.openTab('kernels');
    await page.getByTestId('table-filter').fill('vectorized_elementwise');
    await app.idle();
    const cells = page.locator('[data-testid="kernel-row"] td[data-key="name"]');
    await expect(cells.first()).toBeVisible();
    const names = await cells.evaluateAll((tds) => tds.map((td) => ({ shown: td.textContent, title: td.title })));
    expect(names.length).toBeGreaterThanOrEqual(5);
    for (const n of names) {
      expect(n.title.startsWith('void at::native::vectorized_elementwise_kernel<')).toBe(true);
      expect(n.shown.startsWith('vectorized_elementwise_kernel<'), n.shown).toBe(true);
      expect(n.shown.length).toBeLessThan(n.title.length);
    }
    expect(new Set(names.map((n) => n.shown)).size, 'every row reads differently').toBe(names.length);
    await app.screenshot(`first-use-kernel-names-${width}`);

    // Every column shown, the table is wider than the page; scrolled to its right edge, the
    // name cells stay at its left edge.
    await app.showColumns('median', 'p95', 'max', 'blocks_per_sm', 'occupancy', 'class', 'tensor_cores', 'precision', 'top_op');
    const box = page.locator('.data-table').filter({ has: page.getByTestId('kernel-table') });
    const scrolled = await box.evaluate((el) => { el.scrollLeft = el.scrollWidth; return el.scrollLeft; });
    expect(scrolled, 'the kernel table scrolls sideways').toBeGreaterThan(0);
    const [boxLeft, nameLeft, headLeft] = await box.evaluate((el) => [
      el.getBoundingClientRect().left,
      el.querySelector('td[data-key="name"]').getBoundingClientRect().left,
      el.querySelector('[data-testid="col-name"]').getBoundingClientRect().left,
    ]);
    expect(Math.abs(nameLeft - boxLeft)).toBeLessThanOrEqual(1);
    expect(Math.abs(headLeft - boxLeft)).toBeLessThanOrEqual(1);
    await box.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(RESULTS_DIR, `first-use-sticky-name-${width}.png`) });
  });

  test(`at ${width} px: the search placeholder is whole; the GPU legend says what each series is`, async ({ app, page }) => {
    await page.setViewportSize({ width, height: 900 });
    await app.open();
    const fit = await app.searchInput.evaluate((input) => {
      const style = getComputedStyle(input);
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return { text: ctx.measureText(input.placeholder).width, room };
    });
    expect(fit.text, 'placeholder width <= room in the box').toBeLessThanOrEqual(fit.room);
    await app.openTab('charts');
    await app.idle();
    const legend = await page.evaluate(() => window.kinetoscope.charts.gpuLegend);
    expect(legend).toContain('GPU 0 utilization: % of time a kernel runs');
    expect(legend.some((l) => /SM efficiency: est\. % of SMs busy/.test(l))).toBe(true);
    await page.getByTestId('chart-gpu').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(RESULTS_DIR, `first-use-gpu-chart-${width}.png`) });
  });
}

for (const width of WIDTHS) {
  test(`at ${width} px the op table's default columns fit: Name, the sorted column and Calls in view`, async ({ app, page }) => {
    await page.setViewportSize({ width, height: 900 });
    await app.open();
    await app.openTab('ops');
    const { sort } = await app.table();
    const box = page.locator('.data-table').filter({ has: page.getByTestId('op-table') });
    const heads = await box.evaluate((el) => {
      const right = el.getBoundingClientRect().right;
      return [...el.querySelectorAll('th')].map((th) => ({ key: th.dataset.testid.slice(4), inView: th.getBoundingClientRect().right <= right + 1 }));
    });
    const keys = heads.map((h) => h.key);
    expect(keys).toContain('calls');
    expect(keys).toContain(sort.key);
    expect(heads.filter((h) => !h.inView), 'columns off screen').toEqual([]);
    if (width === 800) expect(keys).toEqual(['name', 'self_cuda', 'cuda_total', 'calls']);
    else expect(keys).toEqual(['name', 'self_cpu', 'cpu_total', 'cpu_avg', 'self_cuda', 'cuda_total', 'cuda_avg', 'calls']);
    await box.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(RESULTS_DIR, `first-use-op-columns-${width}.png`) });

    // A choice is kept in this browser: hide CUDA total, reload, it stays hidden.
    await page.getByTestId('column-chooser').locator('summary').click();
    await page.locator('[data-testid="column-toggle"][data-key="cuda_total"]').click();
    await expect(page.getByTestId('col-cuda_total')).toHaveCount(0);
    await page.reload();
    await app.waitForLoads(1);
    await app.openTab('ops');
    await expect(page.getByTestId('col-calls')).toBeVisible();
    await expect(page.getByTestId('col-cuda_total')).toHaveCount(0);
  });
}

test('a column is resized by dragging its header edge, and keeps its width when the table is rebuilt', async ({ app, page }) => {
  await app.open();
  await app.openTab('ops');
  const head = page.getByTestId('col-calls');
  // Below the demo's banner the table may start under the fold: scrolled to, as a user would.
  await head.scrollIntoViewIfNeeded();
  const before = (await head.boundingBox()).width;
  const handle = head.getByTestId('col-resize');
  const h = await handle.boundingBox();
  await page.mouse.move(h.x + h.width / 2, h.y + h.height / 2);
  await page.mouse.down();
  await page.mouse.move(h.x + h.width / 2 + 120, h.y + h.height / 2, { steps: 6 });
  await page.mouse.up();
  await app.idle();
  const after = (await head.boundingBox()).width;
  expect(after - before).toBeGreaterThan(100);
  expect(after - before).toBeLessThan(140);
  const sort = (await app.table()).sort;
  expect(sort.key, 'the drag did not sort').not.toBe('calls');
  // Sorting rebuilds the table: the width stays.
  await page.getByTestId('col-cuda_total').click();
  await app.idle();
  expect(Math.abs((await head.boundingBox()).width - after)).toBeLessThanOrEqual(8);
  await app.screenshot('first-use-resized-column');
});

test('the table name filter goes into the share link and comes back in a fresh context', async ({ app, page, browser }) => {
  await app.open();
  await app.openTab('kernels');
  await page.getByTestId('table-filter').fill('elementwise');
  await app.idle();
  const rows = (await app.table()).rows;
  expect(rows).toBeGreaterThan(0);
  await page.waitForFunction(() => /[#&]filter=elementwise/.test(location.hash));
  const link = await page.evaluate(() => window.kinetoscope.link);
  expect(link).toMatch(/filter=elementwise/);

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: page.url() });
  try {
    const other = new AppPage(await context.newPage());
    await other.page.goto(link);
    await other.waitForLoads(1);
    await expect(other.page.getByTestId('tab-kernels')).toHaveClass(/active/);
    await expect(other.page.getByTestId('table-filter')).toHaveValue('elementwise');
    await other.idle();
    expect((await other.table()).rows).toBe(rows);
    await other.screenshot('first-use-filter-link');
  } finally {
    await context.close();
  }
});

test('a file without events says why nothing is shown; a cut-short file says where it stopped', async ({ app, page }) => {
  await app.open();
  await app.drop({ name: 'numbers.json', buffer: Buffer.from('[1,2,3]') });
  const empty = page.getByTestId('empty-state');
  await expect(empty).toBeVisible();
  await expect(empty).toContainText('Nothing to show: this file holds no trace events');
  await expect(page.getByTestId('truncation-banner')).toHaveCount(0);
  await app.screenshot('first-use-empty-state');

  // The first 3,000 bytes of a real trace: `kinetoscope info` gives the events and the offset.
  const cut = path.join(RESULTS_DIR, 'partx-cut.json');
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(cut, fs.readFileSync(realFixture(PARTX)).subarray(0, 3000));
  const info = cliInfo(cut);
  expect(info.truncated).toBe(true);
  const at = /at byte (\d+)/.exec(info.warnings.find((w) => w.startsWith('json_truncated')))[1];
  await app.drop({ name: 'partx-cut.json', buffer: fs.readFileSync(cut) });
  const banner = page.getByTestId('truncation-banner');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText(`reading stopped at byte ${Number(at).toLocaleString('en-US')}`);
  await expect(banner).toContainText(`The ${info.events} complete events before it are loaded`);
  await expect(page.getByTestId('empty-state')).toHaveCount(0);
  await app.screenshot('first-use-truncated');
});

test('a folder without a trace file says nothing was opened, instead of doing nothing', async ({ app, page }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kinetoscope-notraces-'));
  try {
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a trace');
    fs.writeFileSync(path.join(dir, 'readme.md'), '# nor this');
    await app.open();
    const before = (await app.state()).loads;
    await page.getByTestId('folder-input').setInputFiles(dir);
    await app.waitForLoads(before + 1);
    await expect(app.error).toBeVisible();
    await expect(app.error).toContainText('No trace file in that folder: nothing was opened');
    await app.screenshot('first-use-empty-folder');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
