// The timeline canvas as drawn, read from its pixels rather than the app's hook: a kernel's
// slice is filled, the selection is outlined, its flow arrow is drawn and gone once deselected,
// and the steps are marked on the ruler. Positions come from the hook (where a slice lies), the
// colors from app/src/timeline/theme.rs (the light theme, Playwright's default color scheme).
const { test, expect } = require('../pages/app');
const { realFixture } = require('../support/fixtures');

const PARTX = 'partx__profiler_trace_single_sample.json';
const BACKGROUND = [0xff, 0xff, 0xff];
const STRIPE = [0xf5, 0xf6, 0xf8];
const SELECTION = [0x11, 0x11, 0x11];
const FLOW = [0xd0, 0x35, 0x6a];
// The step band, rgba(40,90,200,0.35) over the ruler's #f0f2f5.
const RULER = [0xf0, 0xf2, 0xf5];
const STEP_ON_RULER = [40, 90, 200].map((c, i) => Math.round(0.35 * c + 0.65 * RULER[i]));

// `idle()` says no query is pending, not that the canvas has been painted since: the timeline
// paints in the next animation frame (app/src/frame.rs). The pixels are read after two, so the
// paint the last change asked for has run.
const painted = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));

/** RGB of the canvas pixels at `points` ([x, y] canvas px; scale factor 1), once painted. */
async function colorsAt(app, points) {
  await app.page.evaluate(painted);
  return app.canvas.evaluate((c, pts) => {
    const ctx = c.getContext('2d');
    return pts.map(([x, y]) => Array.from(ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data.slice(0, 3)));
  }, points);
}

/** How many pixels of the whole canvas are `color` exactly, once painted. */
async function countOf(app, color) {
  await app.page.evaluate(painted);
  return app.canvas.evaluate((c, rgb) => {
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i] === rgb[0] && data[i + 1] === rgb[1] && data[i + 2] === rgb[2]) n += 1;
    }
    return n;
  }, color);
}

const near = (a, b, tol = 3) => a.every((v, i) => Math.abs(v - b[i]) <= tol);
const share = (colors, color, tol) => colors.filter((c) => near(c, color, tol)).length / colors.length;

/** Canvas x of time `ns` and the top of row `row` of lane `lane` in the current view: the page
 *  object's point (the row's middle, page coordinates) less the canvas origin and half a row. */
async function placeOf(app, lane, row, ns) {
  const at = await app.pointOf(lane, row, ns);
  const box = await app.canvas.boundingBox();
  return { x: at.x - box.x, top: at.y - box.y - 9 };
}

/** Searches `text`, selects the first match and frames it (F); returns the selection. */
async function frameFirst(app, page, text) {
  await app.searchInput.fill(text);
  await app.idle();
  await app.searchInput.press('Enter');
  await app.idle();
  await app.searchInput.press('Escape');
  await page.keyboard.press('f');
  await app.idle();
  const sel = (await app.timeline()).selection;
  expect(sel && sel.name).toContain(text);
  return sel;
}

test('a selected kernel: its slice filled, outlined in the selection color, its flow arrow drawn; deselected, neither', async ({ app, page }) => {
  await app.open();
  await app.upload(realFixture(PARTX));
  await app.waitForTimeline();
  const sel = await frameFirst(app, page, 's16816gemm');
  const t = await app.timeline();
  const { x: x0, top } = await placeOf(app, sel.lane, sel.row, sel.startNs);
  const x1 = (sel.startNs + sel.durNs - t.startNs) / t.nsPerPx;
  expect(x1 - x0, 'framed: the kernel is wide').toBeGreaterThan(200);

  // The fill: the middle of the slice is neither the background nor a lane stripe.
  const [middle] = await colorsAt(app, [[(x0 + x1) / 2, top + 9]]);
  expect(near(middle, BACKGROUND, 0) || near(middle, STRIPE, 0), `slice fill ${middle}`).toBe(false);

  // The outline: along the slice's top edge (searched over a few rows for the stroke's pixel
  // row), the selection color.
  const xs = Array.from({ length: 40 }, (_, i) => x0 + 4 + ((x1 - x0 - 8) * i) / 39);
  const edge = async () => {
    let best = 0;
    for (let y = top - 2; y <= top + 3; y += 1) best = Math.max(best, share(await colorsAt(app, xs.map((x) => [x, y])), SELECTION, 12));
    return best;
  };
  expect(await edge(), 'the top edge is outlined').toBeGreaterThan(0.9);

  // The flow arrow from the launching cudaLaunchKernel: zoomed out until the launch is in view.
  for (let i = 0; i < 6; i += 1) await page.keyboard.press('s');
  await app.idle();
  const withSelection = await countOf(app, FLOW);
  await page.keyboard.press('Escape');
  await app.idle();
  expect((await app.timeline()).selection).toBeNull();
  const without = await countOf(app, FLOW);
  expect(withSelection - without, `flow-colored pixels with the selection (${withSelection}) and without (${without})`).toBeGreaterThan(30);

  // Deselected and framed again: no outline.
  await page.keyboard.press('0');
  await app.idle();
  await frameFirst(app, page, 's16816gemm');
  await page.keyboard.press('Escape');
  await app.idle();
  expect(await edge(), 'no outline once deselected').toBeLessThan(0.2);
});

test('the steps are marked on the ruler: the band under a step is the step color', async ({ app, page }) => {
  await app.open(); // the demo
  await app.waitForTimeline();
  const step = await frameFirst(app, page, 'ProfilerStep#');
  await page.keyboard.press('Escape');
  await app.idle();
  const t = await app.timeline();
  const x0 = (step.startNs - t.startNs) / t.nsPerPx;
  const x1 = (step.startNs + step.durNs - t.startNs) / t.nsPerPx;
  const xs = Array.from({ length: 40 }, (_, i) => x0 + 3 + ((x1 - x0 - 6) * i) / 39);
  // The band is the ruler's bottom 3 px; the rows above it are the ruler's own color.
  const band = await colorsAt(app, xs.map((x) => [x, t.rulerH - 2]));
  expect(share(band, STEP_ON_RULER, 4), `band ${JSON.stringify(band.slice(0, 3))}, want ${STEP_ON_RULER}`).toBeGreaterThan(0.9);
  const above = await colorsAt(app, xs.map((x) => [x, t.rulerH - 4]));
  expect(share(above, STEP_ON_RULER, 4), 'above the band').toBeLessThan(0.5);
});
