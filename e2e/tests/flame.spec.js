// Journey: read a with_stack trace's call tree on the Flame tab (H100 BERT): the root's
// children (threads) and totals equal `kinetoscope report --tree --min-pct 0.1 --json`; the
// canvas is painted inside the boxes it reports (a pixel inside the largest box is its kind's
// color, not the background); clicking a box selects that frame's first call on the timeline,
// searches its name and zooms into it (it then spans the width, its ancestors above it); the
// breadcrumb zooms back out; the GPU toggle sizes the boxes by GPU time.
const { test, expect } = require('../pages/app');
const { realFixture, cliReport } = require('../support/fixtures');

const BERT = realFixture('tracelens__h100__gaunernst_bert-small-uncased__1016001.json.gz');

/** `window.kinetoscope.flame`. */
const flame = (app) => app.page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.flame)));

/** The flame hook once boxes are drawn and `check(flame)` holds. */
async function drawn(app, check = () => true) {
  await app.idle();
  await expect.poll(async () => {
    const f = await flame(app);
    return Boolean(f && f.rects.length > 0 && check(f));
  }, { timeout: 10000 }).toBe(true);
  return flame(app);
}

/** ns equals the report's µs (3 decimals written). */
function expectUs(ns, us, what) {
  expect(Math.abs(ns / 1e3 - us), `${what}: ${ns} ns vs ${us} µs`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(us)));
}

/** The canvas pixel (RGBA) at CSS px (x, y) from its top-left. */
function pixel(app, x, y) {
  return app.page.evaluate(([x, y]) => {
    const c = document.querySelector('[data-testid="flame-canvas"]');
    const scale = c.width / c.clientWidth;
    return Array.from(c.getContext('2d').getImageData(Math.floor(x * scale), Math.floor(y * scale), 1, 1).data);
  }, [x, y]);
}

test('flame tab: root children equal report --tree; boxes painted; click selects and zooms', async ({ app }) => {
  await app.open();
  await app.upload(BERT);
  await app.openTab('flame');
  let f = await drawn(app);
  const want = cliReport(BERT, '--tree', '--min-pct', '0.1').call_tree;
  expect(f).toMatchObject({ scope: 'trace', metric: 'cpu', zoom: 0, nodes: want.nodes, leftOut: want.left_out, minPct: 0.1 });
  expectUs(f.root.totalNs, want.root.total_us, 'root CPU total');
  expectUs(f.root.gpuTotalNs, want.root.gpu_total_us, 'root GPU total');
  expect(f.children.map((c) => c.name)).toEqual(want.root.children.map((c) => c.name));
  for (const [i, c] of want.root.children.entries()) {
    expectUs(f.children[i].totalNs, c.total_us, `thread ${c.name} CPU`);
    expectUs(f.children[i].gpuTotalNs, c.gpu_total_us, `thread ${c.name} GPU`);
    expect(f.children[i].calls, `thread ${c.name} calls`).toBe(c.calls);
  }
  expect(want.root.children.length).toBeGreaterThan(0);

  // The rects: the root spans the canvas; every box lies inside it; Python frames are drawn.
  const canvas = app.page.getByTestId('flame-canvas');
  const width = await canvas.evaluate((c) => c.clientWidth);
  const root = f.rects.find((r) => r.index === 0);
  expect([root.x, root.y, root.w]).toEqual([0, 0, width]);
  for (const r of f.rects) expect(r.x >= -1e-6 && r.x + r.w <= width + 1e-6, `${r.name} inside`).toBe(true);
  expect(f.rects.some((r) => r.kind === 'python')).toBe(true);
  await expect(app.page.getByTestId('tab-flame')).toHaveClass(/active/);

  // A pixel inside the largest box below the root (near its top edge, clear of the label) is
  // the box's fill, not the background.
  const largest = f.rects.filter((r) => r.y > 0).sort((a, b) => b.w - a.w)[0];
  const background = await pixel(app, width - 1, (await canvas.evaluate((c) => c.clientHeight)) - 1);
  const inside = await pixel(app, largest.x + largest.w * 0.75, largest.y + 1.5);
  expect(inside, `${largest.name} painted`).not.toEqual(background);
  expect(inside[3]).toBe(255);
  await app.screenshot('flame-whole-trace');

  // Hover shows the box's numbers.
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  await app.page.mouse.move(box.x + largest.x + largest.w / 2, box.y + largest.y + largest.h / 2);
  await expect(app.page.getByTestId('flame-tooltip')).toContainText(largest.name);
  await expect(app.page.getByTestId('flame-tooltip')).toContainText('calls');

  // Click a frame two levels below a thread: its first call is selected, its name searched,
  // and the chart zooms into it.
  const target = f.rects.filter((r) => r.firstId !== null && r.y >= 2 * r.h && r.w < width).sort((a, b) => b.w - a.w)[0];
  expect(target, 'a frame to click').toBeTruthy();
  await app.page.mouse.click(box.x + target.x + target.w / 2, box.y + target.y + target.h / 2);
  f = await drawn(app, (x) => x.zoom === target.index);
  const tl = await app.timeline();
  expect(tl.selection && tl.selection.id).toBe(target.firstId);
  expect(tl.selection.name).toBe(target.name);
  expect(tl.search && tl.search.text).toBe(target.name);
  const zoomed = f.rects.find((r) => r.index === target.index);
  expect([zoomed.x, zoomed.w, zoomed.y]).toEqual([0, width, target.y]);
  expect(f.zoomName).toBe(target.name);
  expect(f.rects.filter((r) => r.y < target.y).every((r) => r.x === 0 && r.w === width), 'ancestors span the width').toBe(true);
  await expect(canvas).toHaveAttribute('data-zoom', String(target.index));
  await app.screenshot('flame-zoomed');

  // The breadcrumb's first button (the root) zooms out.
  await app.page.getByTestId('flame-crumb').first().click();
  f = await drawn(app, (x) => x.zoom === 0);
  await expect(app.page.getByTestId('flame-reset')).toBeDisabled();

  // GPU time: the boxes are sized by it (the root's children by their GPU share).
  await app.page.locator('[data-testid="flame-metric"][data-metric="gpu"]').click();
  f = await drawn(app, (x) => x.metric === 'gpu');
  await expect(canvas).toHaveAttribute('data-metric', 'gpu');
  const gpuThreads = f.children.filter((c) => width * c.gpuTotalNs / f.root.gpuTotalNs >= 0.5);
  for (const c of gpuThreads) {
    const r = f.rects.find((x) => x.index === c.index);
    expect(Math.abs(r.w - width * c.gpuTotalNs / f.root.gpuTotalNs), `${c.name} GPU width`).toBeLessThan(1e-6 * width);
  }
  expect(f.rects.filter((r) => r.y === r.h).length).toBe(gpuThreads.length);
});

// Journey: compare the H100 BERT trace with itself (Compare keeps it as the baseline and loads
// it again); on the Flame tab "color by change vs baseline" colors every box by its call path's
// change: all within ±2%, so every box is `same` and painted the neutral grey.
test('flame tab against a baseline: a trace compared with itself is all neutral', async ({ app }) => {
  await app.open();
  await app.upload(BERT);
  await app.compareWith(BERT);
  await app.openTab('flame');
  await drawn(app);
  await expect(app.page.locator('[data-testid="flame-color"]')).toHaveCount(2);
  await app.page.locator('[data-testid="flame-color"][data-color="growth"]').click();
  const f = await drawn(app, (x) => x.againstBaseline);
  expect(f.rects.length).toBeGreaterThan(20);
  expect(f.rects.filter((r) => r.growth !== 'same').map((r) => `${r.name}: ${r.growth}`)).toEqual([]);
  await expect(app.page.locator('.flame-key[data-key="same"]')).toBeVisible();
  // The largest Python frame, yellow by kind, is painted the neutral grey (#c4c8d0).
  const largest = f.rects.filter((r) => r.kind === 'python').sort((a, b) => b.w - a.w)[0];
  expect(await pixel(app, largest.x + largest.w * 0.75, largest.y + 1.5)).toEqual([0xc4, 0xc8, 0xd0, 255]);
  await app.screenshot('flame-against-itself');
});
