// Journey: what bounds a step. On the resnet50 trace (steps, GPU work, launches, syncs): the
// Steps tab's bound-by bars are the CLI's `critical_path.steps` (`report --json`); the
// timeline's Critical path toggle (key C) outlines exactly the picked step's path slices in
// view (the hook and the canvas pixels agree: the outline color on a path slice, everything
// else under the veil) and the share link keeps it; a What if edit gives every step the time
// `report --json --what-if EDIT` gives; the findings are in the CLI's order (by severity, then
// impact), the negligible ones folded, each with its impact.
const { test, expect } = require('../pages/app');
const { realFixture, cliReport } = require('../support/fixtures');

const RESNET = 'kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz';
/** `OUTLINE` in app/src/timeline/critical.rs. */
const OUTLINE_RGB = [0xff, 0x1f, 0x8f];
/** `tracks::LANE_PAD` and `ROW_H` in app/src/state/tracks.rs. */
const LANE_PAD = 3;
const ROW_H = 18;

/** `window.kinetoscope.critical` as plain data. */
async function critical(page) {
  return page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.critical)));
}

/** Resolves after two animation frames: the frame scheduler has painted the last change. */
async function painted(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/** RGBA of the canvas' pixels on row `y` (device px = CSS px: scale factor 1). */
async function canvasRow(page, y) {
  return page.getByTestId('timeline-canvas').evaluate((c, yy) => {
    const { data } = c.getContext('2d').getImageData(0, yy, c.width, 1);
    return Array.from(data);
  }, y);
}

test('bound-by bars equal the CLI, the toggle outlines exactly the path and dims the rest', async ({ app, page }) => {
  const file = realFixture(RESNET);
  const cli = cliReport(file).critical_path;
  await app.open();
  await app.upload(file);
  await app.waitForTimeline();

  // With no step picked, the toggle outlines every step's path around the view, asked for
  // that window only (the worker sends shares for the bars, slices for the overlay).
  await page.getByTestId('critical-toggle').click();
  await app.idle();
  await painted(page);
  const all = await critical(page);
  expect(all).toMatchObject({ shown: true, step: null });
  const view = await app.timeline();
  expect(all.segments.step).toBe(null);
  expect(all.segments.startNs).toBeLessThanOrEqual(view.startNs);
  expect(all.segments.endNs).toBeGreaterThanOrEqual(view.endNs);
  expect(all.segments.count).toBeGreaterThan(0);
  expect(all.outlined.length).toBeGreaterThan(0);
  expect(await page.evaluate(() => window.kinetoscope.link)).toContain('cp=all');
  await page.getByTestId('critical-toggle').click();
  await app.idle();
  await app.openTab('steps');

  // The bars: one per step, the CLI's bound-by class and shares (µs there, ns here).
  const c = await critical(page);
  expect(c.classes).toEqual(cli.classes);
  expect(c.steps.map((s) => s.step)).toEqual(cli.steps.map((s) => s.step));
  for (const [k, s] of c.steps.entries()) {
    const want = cli.steps[k];
    expect(s.boundBy).toBe(want.bound_by);
    expect(s.sharesNs).toEqual(cli.classes.map((id) => Math.round(want.shares_us[id] * 1000)));
    expect(s.sharesNs.reduce((a, b) => a + b, 0)).toBe(s.endNs - s.startNs);
  }
  const rows = page.getByTestId('bound-by-row');
  await expect(rows).toHaveCount(cli.steps.length);
  expect(await rows.evaluateAll((els) => els.map((e) => e.dataset.boundBy))).toEqual(cli.steps.map((s) => s.bound_by));
  const parts = await rows.first().getByTestId('bound-by-part')
    .evaluateAll((els) => els.map((e) => [e.dataset.class, Number(e.dataset.value)]));
  expect(parts).toEqual(c.steps[0].sharesNs.map((ns, k) => [c.classes[k], ns]).filter(([, ns]) => ns > 0));
  await expect(page.getByTestId('bound-by-class')).toHaveCount(9);

  // Pick the slowest step's bar, show the whole step on the timeline; the toggle (C) asks for
  // the step's path slices (read here, then off again to read the canvas without the overlay).
  const slowest = c.steps.reduce((a, b) => (b.endNs - b.startNs > a.endNs - a.startNs ? b : a));
  await page.locator(`[data-testid="bound-by-row"][data-step="${slowest.step}"]`).click();
  await app.idle();
  await page.locator('body').press('c');
  await app.idle();
  slowest.slices = (await critical(page)).steps.find((s) => s.step === slowest.step).slices;
  expect(slowest.slices.length).toBeGreaterThan(0);
  await page.locator('body').press('c');
  await app.idle();
  await painted(page);
  const before = await app.timeline();
  expect(before.startNs).toBeLessThanOrEqual(slowest.startNs);
  expect(before.endNs).toBeGreaterThanOrEqual(slowest.endNs);
  const wide = pickWide(before, slowest, c.steps);
  expect(wide, 'a path slice at least 12 px wide on a laid-out row').toBeTruthy();
  const y = rowTop(before, wide) + ROW_H / 2;
  const rowBefore = await canvasRow(page, Math.round(y));
  await page.locator('body').press('c');
  await app.idle();
  await painted(page);
  const on = await critical(page);
  expect(on).toMatchObject({ shown: true, step: slowest.step });
  // The picked step's path slices (the hook lists them once picked) hold the CLI's top events.
  const picked = on.steps.find((s) => s.step === slowest.step);
  for (const e of cli.steps.find((s) => s.step === slowest.step).top_events) {
    expect(picked.slices.some((x) => x.startNs === Math.round(e.ts_us * 1000) && x.durNs === Math.round(e.dur_us * 1000))).toBe(true);
  }
  await expect(page.getByTestId('critical-toggle')).toHaveAttribute('aria-pressed', 'true');

  // Exactly the step's path slices in view on a laid-out row are outlined.
  const t = await app.timeline();
  const expected = slowest.slices.filter((s) => inView(t, s)).map((s) => s.id).sort((a, b) => a - b);
  expect(expected.length).toBeGreaterThan(0);
  expect(on.outlined).toEqual(expected);
  expect(on.arrows).toBeGreaterThan(0);

  // Pixels: the outline's color on the wide path slice's left edge; off the path, slices
  // drawn before are now under the veil (lighter, never the same).
  const rowAfter = await canvasRow(page, Math.round(y));
  const x0 = Math.round((wide.startNs - t.startNs) / t.nsPerPx);
  // Within 2 per channel: the canvas' color conversion may move a channel by one.
  const edge = rowAfter.slice((x0 + 1) * 4, (x0 + 1) * 4 + 3);
  edge.forEach((v, i) => expect(Math.abs(v - OUTLINE_RGB[i]), `outline rgb ${edge}`).toBeLessThanOrEqual(2));
  const inside = rowBefore.slice((x0 + 6) * 4, (x0 + 6) * 4 + 3);
  expect(rowAfter.slice((x0 + 6) * 4, (x0 + 6) * 4 + 3), 'a path slice is drawn again above the veil').toEqual(inside);
  const covered = (x) => slowest.slices.concat(...on.steps.map((s) => s.slices)).some((s) => s.lane === wide.lane && s.row === wide.row
    && x >= (s.startNs - t.startNs) / t.nsPerPx - 4 && x <= (s.startNs + s.durNs - t.startNs) / t.nsPerPx + 4);
  // Step lines and the path's arrows are drawn above the veil: columns near a step edge are
  // left out, and an arrow may cross the row, so nearly all (not all) must match.
  const edges = c.steps.flatMap((s) => [s.startNs, s.endNs]).map((ns) => (ns - t.startNs) / t.nsPerPx);
  const background = rowBefore.slice(0, 3);
  let candidates = 0;
  let dimmed = 0;
  for (let x = 0; x < t.width; x++) {
    const b = rowBefore.slice(x * 4, x * 4 + 3);
    if (covered(x) || edges.some((e) => Math.abs(e - x) < 3) || b.every((v, i) => Math.abs(v - background[i]) < 8)) continue;
    const a = rowAfter.slice(x * 4, x * 4 + 3);
    candidates++;
    // A white veil at 75%: each channel moves three quarters of the way to 255.
    if (a.every((v, i) => Math.abs(v - (0.25 * b[i] + 0.75 * 255)) < 4)) dimmed++;
  }
  expect(candidates, 'slices off the path on that row').toBeGreaterThan(10);
  expect(dimmed / candidates, 'slices off the path are under the veil').toBeGreaterThan(0.95);
  await app.screenshot('critical-path-on');

  // The share link keeps the toggle and its step.
  const link = await page.evaluate(() => window.kinetoscope.link);
  expect(link).toContain(`cp=${slowest.step}`);
  await page.getByTestId('critical-toggle').click();
  await app.idle();
  expect((await critical(page)).outlined).toEqual([]);
  expect(await page.evaluate(() => window.kinetoscope.link)).not.toContain('cp=');
});

/** A path slice of `step` at least 12 px wide in `t`'s view, on a laid-out row on screen,
 * starting clear of every step edge (step lines are drawn above the overlay). */
function pickWide(t, step, steps) {
  const x = (ns) => (ns - t.startNs) / t.nsPerPx;
  const edges = steps.flatMap((s) => [s.startNs, s.endNs]).map(x);
  return step.slices.find((s) => inView(t, s) && s.durNs / t.nsPerPx >= 12 && x(s.startNs) > 2
    && edges.every((e) => Math.abs(e - x(s.startNs)) > 4)
    && rowTop(t, s) > t.rulerH && rowTop(t, s) + ROW_H < t.height + t.rulerH);
}

/** Top of the row of slice `s` on the canvas, CSS px (`undefined` when not laid out). */
function rowTop(t, s) {
  const l = t.lanes.find((x) => x.lane === s.lane && s.row >= x.first_row && s.row < x.first_row + x.rows);
  return l && t.rulerH + l.y - t.scrollY + LANE_PAD + (s.row - l.first_row) * ROW_H;
}

/** Whether slice `s` is drawn in `t`'s view: its row laid out, its span crossing the view. */
function inView(t, s) {
  const x0 = (s.startNs - t.startNs) / t.nsPerPx;
  const x1 = (s.startNs + s.durNs - t.startNs) / t.nsPerPx;
  return rowTop(t, s) !== undefined && x1 >= 0 && x0 <= t.width;
}

test('a what-if edit gives every step the time report --what-if gives', async ({ app, page }) => {
  const file = realFixture(RESNET);
  const cli = cliReport(file, '--what-if', 'launch=0', '--what-if', 'gemm*0.5').what_if;
  await app.open();
  await app.upload(file);
  await app.openTab('steps');
  await page.locator('[data-testid="what-if-preset"][data-edit="launch=0"]').click();
  await app.idle();
  await page.getByTestId('what-if-input').fill('gemm*0.5');
  await page.getByTestId('what-if-add').click();
  await app.idle();
  const w = (await critical(page)).whatIf;
  expect(w.edits).toEqual(cli.edits);
  expect(w.steps.map((s) => s.step)).toEqual(cli.steps.map((s) => s.step));
  for (const [k, s] of w.steps.entries()) {
    expect(s.beforeNs).toBe(Math.round(cli.steps[k].before_us * 1000));
    expect(s.afterNs).toBe(Math.round(cli.steps[k].after_us * 1000));
    expect(s.boundByAfter).toBe(cli.steps[k].bound_by_after);
  }
  expect(w.steps.some((s) => s.afterNs < s.beforeNs), 'the edits shorten some step').toBe(true);
  const rows = page.getByTestId('what-if-row');
  expect(await rows.evaluateAll((els) => els.map((e) => Number(e.dataset.after))))
    .toEqual(cli.steps.map((s) => Math.round(s.after_us * 1000)));
  // A changed bound says which path became critical.
  const changed = cli.steps.filter((s) => s.bound_by_after !== s.bound_by_before).length;
  await expect(page.getByTestId('what-if-note')).toHaveCount(changed);

  // A bad edit is refused in one sentence, nothing recomputed; removing it asks again.
  await page.getByTestId('what-if-input').fill('gemm*fast');
  await page.getByTestId('what-if-input').press('Enter');
  await app.idle();
  await expect(page.getByTestId('what-if-error')).toContainText('gemm*fast');
  await page.getByTestId('what-if-remove').last().click();
  await app.idle();
  await expect(page.getByTestId('what-if-error')).toHaveCount(0);
  await expect(rows).toHaveCount(cli.steps.length);
  await app.screenshot('what-if');
});

test('findings are in the CLI order, by impact within a severity, negligible ones folded', async ({ app, page }) => {
  const file = realFixture(RESNET);
  const expected = cliReport(file).findings;
  await app.open();
  await app.upload(file);
  await app.openTab('findings');
  // As the page folds them (app/src/panels/findings.rs): demoted warnings, and infos under 2%
  // of step time unless the rule is about the trace's health or memory, not step time.
  const aboutSteps = (f) => !f.rule.startsWith('health-') && !['memory-near-limit', 'partial-trace'].includes(f.rule);
  const negligible = (f) => f.why.includes('Negligible:') || (aboutSteps(f) && f.severity === 'info' && f.impact && f.impact.pct < 2);
  const items = page.getByTestId('finding');
  await expect(items).toHaveCount(expected.length);
  const shown = await items.evaluateAll((els) => els.map((e) => e.dataset.rule));
  expect(shown).toEqual([...expected.filter((f) => !negligible(f)), ...expected.filter(negligible)].map((f) => f.rule));
  const folded = page.getByTestId('findings-negligible');
  await expect(folded.locator('summary')).toHaveText(`Negligible (${expected.filter(negligible).length})`);
  await expect(folded.getByTestId('finding')).toHaveCount(expected.filter(negligible).length);
  // Within a severity, the larger impact first (the CLI's order, and the page's numbers).
  const rank = { alert: 2, warn: 1, info: 0 };
  const saved = (f) => (f.impact ? f.impact.per_step_us : -1);
  for (let k = 1; k < expected.length; k++) {
    const [a, b] = [expected[k - 1], expected[k]];
    expect(rank[a.severity]).toBeGreaterThanOrEqual(rank[b.severity]);
    if (a.severity === b.severity) expect(saved(a)).toBeGreaterThanOrEqual(saved(b));
  }
  for (const f of expected.filter((x) => x.impact && x.impact.per_step_us > 0)) {
    const el = page.locator(`[data-testid="finding"][data-rule="${f.rule}"] [data-testid="finding-impact"]`);
    await expect(el).toHaveAttribute('data-us', String(f.impact.per_step_us));
    await expect(el).toContainText(`per step (${f.impact.pct.toFixed(1)}%)`);
  }
  await app.screenshot('findings-impact');
});
