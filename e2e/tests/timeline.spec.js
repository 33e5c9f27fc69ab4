// Journey: the lane timeline. Lanes listed equal the trace's threads and streams (the CLI's
// `info --json` as oracle); W/S/A/D change the visible range; clicking a kernel shows its args
// and the launching cudaLaunchKernel (and back); shift-drag selects a range and the op table
// is recomputed for it (equal to `report --range`); search counts and selects matches; a table
// row highlights its op; groups fold; F frames the selection, Reset zoom and the ? button do
// what their labels say, wheel scrolls lanes and shift+wheel pans (docs/viewer.md#navigation);
// search counts what the trace JSON holds; flows follow its correlation ids. State is read
// from `window.kinetoscope.timeline`.
const fs = require('node:fs');
const zlib = require('node:zlib');
const { test, expect } = require('../pages/app');
const { realFixture, torchCpuFixture, cliInfo, cliReport, DEMO_TRACE } = require('../support/fixtures');

const PARTX = 'partx__profiler_trace_single_sample.json';

/** The pid and tid of the first `ProfilerStep#N` in the trace JSON, as text; null without one. */
function stepThread(file) {
  let bytes = fs.readFileSync(file);
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = zlib.gunzipSync(bytes);
  const json = JSON.parse(bytes.toString('utf8'));
  const events = (Array.isArray(json) ? json : json.traceEvents)
    .filter((e) => e.ph === 'X' && /^ProfilerStep#\d+$/.test(e.name || ''))
    .sort((a, b) => a.ts - b.ts);
  return events.length ? { pid: String(events[0].pid), tid: String(events[0].tid) } : null;
}

/** Lane names per process from `kinetoscope info --json`, processes without lanes left out,
 *  in the timeline's order (docs/viewer.md): GPUs first, then the process whose thread holds
 *  the first ProfilerStep#N (that thread first), then the others in trace order. */
function expectedLanes(file) {
  const step = stepThread(file);
  const holds = (p) => step !== null && p.pid === step.pid && p.lanes.some((l) => l.tid === step.tid);
  const rank = (p) => (p.kind === 'gpu' ? 0 : holds(p) ? 1 : 2);
  return cliInfo(file).processes.filter((p) => p.lanes.length > 0)
    .map((p, i) => ({ p, i }))
    .sort((a, b) => rank(a.p) - rank(b.p) || a.i - b.i)
    .map(({ p }) => {
      const lanes = holds(p) ? [...p.lanes.filter((l) => l.tid === step.tid), ...p.lanes.filter((l) => l.tid !== step.tid)] : p.lanes;
      return { name: p.name, lanes: lanes.map((l) => l.name) };
    });
}

/** Lane names per group as the page lists them. */
async function shownLanes(app) {
  return app.page.evaluate(() => {
    const out = [];
    const labels = document.querySelectorAll('[data-testid="lane-labels"] [data-testid]');
    for (const el of labels) {
      const text = el.textContent.replace(/^[▾▸] /, '');
      if (el.dataset.testid === 'group-label') out.push({ name: text, lanes: [] });
      else if (el.dataset.testid === 'lane-label') out[out.length - 1].lanes.push(text);
    }
    return out;
  });
}

for (const [name, file] of [['demo', DEMO_TRACE], ['partx', realFixture(PARTX)],
  ['dlrm rank 0', realFixture('param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json')]]) {
  test(`lanes listed match the trace's threads and streams: ${name}`, async ({ app }) => {
    await app.open();
    if (file !== DEMO_TRACE) await app.upload(file);
    await app.waitForTimeline();
    expect(await shownLanes(app)).toEqual(expectedLanes(file));
    const t = await app.timeline();
    expect(t.lanes.length).toBe(cliInfo(file).lanes);
    expect(t.rects).toBeGreaterThan(0);
  });
}

test('W/S zoom and A/D pan change the visible range; 0 resets; groups fold', async ({ app, page }) => {
  await app.open();
  await app.waitForTimeline();
  const t0 = await app.timeline();
  const span = (t) => t.endNs - t.startNs;
  await page.keyboard.press('w');
  await app.idle();
  const t1 = await app.timeline();
  expect(span(t1)).toBeLessThan(span(t0) * 0.85);
  await page.keyboard.press('d');
  await app.idle();
  const t2 = await app.timeline();
  expect(t2.startNs).toBeGreaterThan(t1.startNs);
  expect(span(t2)).toBeCloseTo(span(t1), 0);
  await page.keyboard.press('a');
  await page.keyboard.press('a');
  await app.idle();
  expect((await app.timeline()).startNs).toBeLessThan(t2.startNs);
  await page.keyboard.press('s');
  await page.keyboard.press('s');
  await app.idle();
  expect(span(await app.timeline())).toBeGreaterThan(span(t1));
  await page.keyboard.press('0');
  await app.idle();
  const t3 = await app.timeline();
  expect(t3.startNs).toBeCloseTo(t0.startNs, 0);
  expect(t3.endNs).toBeCloseTo(t0.endNs, 0);

  // Ctrl+wheel zooms around the pointer.
  const box = await app.canvas.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -300);
  await page.keyboard.up('Control');
  await app.idle();
  expect(span(await app.timeline())).toBeLessThan(span(t3) * 0.5);

  // Folding the first group hides its lanes; unfolding brings them back.
  const lanes = (await app.timeline()).lanes.length;
  const group = page.getByTestId('group-label').first();
  await group.click();
  await app.idle();
  await expect(group).toHaveAttribute('data-collapsed', 'true');
  expect((await app.timeline()).lanes.length).toBeLessThan(lanes);
  await group.click();
  await app.idle();
  expect((await app.timeline()).lanes.length).toBe(lanes);

  // The key help overlay.
  await page.keyboard.press('?');
  await expect(page.getByTestId('help-overlay')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('help-overlay')).toHaveCount(0);
});

test('clicking a kernel shows its args and the launching cudaLaunchKernel via the flow', async ({ app, page }) => {
  await app.open();
  await app.upload(realFixture(PARTX));
  await app.waitForTimeline();
  // Find a GEMM kernel by search, zoom to it (F), then deselect and click it on the canvas.
  await app.searchInput.fill('s16816gemm');
  await app.idle();
  await app.searchInput.press('Enter');
  await app.idle();
  let sel = (await app.timeline()).selection;
  expect(sel.name).toContain('s16816gemm');
  await app.searchInput.press('Escape'); // leaves the search box; keys navigate again
  await page.keyboard.press('f');
  await app.idle();
  await page.keyboard.press('Escape');
  await app.idle();
  expect((await app.timeline()).selection).toBeNull();
  const at = await app.pointOf(sel.lane, sel.row, sel.startNs + sel.durNs / 2);
  await page.mouse.click(at.x, at.y);
  await app.idle();
  const clicked = (await app.timeline()).selection;
  expect(clicked.id).toBe(sel.id);
  await expect(app.details).toHaveAttribute('data-slice', String(sel.id));
  await expect(page.getByTestId('detail-name')).toHaveText(sel.name);
  for (const key of ['grid', 'block', 'registers per thread', 'shared memory', 'est. achieved occupancy %', 'correlation']) {
    await expect(page.locator(`[data-testid="detail-arg"][data-key="${key}"]`)).toHaveCount(1);
  }
  expect(clicked.launchedBy).toBe('cudaLaunchKernel');
  const launchedBy = page.getByTestId('launched-by');
  await expect(launchedBy).toContainText('cudaLaunchKernel');
  await app.screenshot('timeline-kernel-selected');

  // Follow the link to the launch call: it lists the kernel it launched.
  await launchedBy.click();
  await app.idle();
  const launch = (await app.timeline()).selection;
  expect(launch.name).toBe('cudaLaunchKernel');
  await expect(page.locator(`[data-testid="launched"][data-slice="${sel.id}"]`)).toHaveCount(1);
  await expect(page.getByTestId('enclosing-op')).toHaveCount(1);
  await app.screenshot('timeline-launch-selected');
});

test('shift-drag selects a range and the op table is recomputed for it', async ({ app, page }) => {
  await app.open();
  await app.waitForTimeline();
  await app.openTab('ops');
  const whole = await app.column('op-row', 'calls');
  const box = await app.canvas.boundingBox();
  const y = box.y + box.height / 2;
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + box.width * 0.45, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.6, y, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await app.idle();
  const t = await app.timeline();
  expect(t.range).not.toBeNull();
  await expect(page.getByTestId('range-readout')).toBeVisible();
  expect((await app.table()).scope).toBe('range');
  const [a, b] = t.range;
  const report = cliReport(DEMO_TRACE, '--range', `${Math.floor(a) / 1000}:${Math.ceil(b) / 1000}`);
  const names = await app.column('op-row', 'name');
  const calls = await app.column('op-row', 'calls');
  const shown = Object.fromEntries(names.map((n, i) => [n, calls[i]]));
  const expected = Object.fromEntries(report.ops.map((o) => [o.name, o.calls]));
  expect(shown).toEqual(expected);
  expect(calls.reduce((x, y) => x + y, 0)).toBeLessThan(whole.reduce((x, y) => x + y, 0));
  await app.screenshot('timeline-range');

  // Clearing the range puts the table back on the whole trace.
  await page.getByTestId('range-clear').click();
  await app.idle();
  expect((await app.table()).scope).toBe('trace');
  expect(await app.column('op-row', 'calls')).toEqual(whole);
});

test('search counts matches, Enter steps through them, a table row highlights its op', async ({ app, page }) => {
  await app.open();
  await app.waitForTimeline();
  const report = cliReport(DEMO_TRACE);
  const addmm = report.ops.find((o) => o.name === 'aten::addmm').calls;
  await app.searchInput.fill('aten::addmm');
  await app.idle();
  let t = await app.timeline();
  expect(t.search.total).toBe(addmm);
  await expect(app.searchCount).toHaveText(`${addmm} matches`);
  const whole = t.nsPerPx;
  await app.searchInput.press('Enter');
  await app.idle();
  t = await app.timeline();
  expect(t.selection.name).toBe('aten::addmm');
  // The match was a hairline in the whole-trace view: it is zoomed into, not just centered.
  expect(t.selection.durNs / whole, 'narrower than 3 px before').toBeLessThan(3);
  expect(t.selection.durNs / t.nsPerPx, 'zoomed to be seen').toBeGreaterThanOrEqual(3);
  expect(t.selection.startNs).toBeGreaterThanOrEqual(t.startNs);
  expect(t.selection.startNs + t.selection.durNs).toBeLessThanOrEqual(t.endNs);
  const first = t.selection.id;
  await app.searchInput.press('Enter');
  await app.idle();
  t = await app.timeline();
  expect(t.selection.id).not.toBe(first);
  expect(t.search.rank).toBe(2);
  await expect(app.searchCount).toHaveText(`2 / ${addmm}`);
  await app.searchInput.press('Shift+Enter');
  await app.idle();
  expect((await app.timeline()).selection.id).toBe(first);
  await app.screenshot('timeline-search');

  // Clicking an op row searches the timeline for it.
  await app.openTab('ops');
  await page.getByTestId('op-row').filter({ hasText: 'aten::mm' }).first().click();
  await app.idle();
  t = await app.timeline();
  expect(t.search.text).toBe('aten::mm');
  expect(t.search.total).toBeGreaterThanOrEqual(report.ops.find((o) => o.name === 'aten::mm').calls);
});

test('the theme toggle switches the page and canvas colors', async ({ app, page }) => {
  await app.open();
  await app.waitForTimeline();
  const before = await page.evaluate(() => document.documentElement.dataset.theme);
  await page.getByTestId('theme-toggle').click();
  await app.idle();
  const after = await page.evaluate(() => document.documentElement.dataset.theme);
  expect(after).not.toBe(before);
  await app.screenshot(`timeline-${after}`);
});

test('F frames the selected kernel: the window is its span plus 10% each side', async ({ app, page }) => {
  await app.open();
  await app.upload(realFixture(PARTX));
  await app.waitForTimeline();
  await app.searchInput.fill('s16816gemm');
  await app.idle();
  await app.searchInput.press('Enter');
  await app.idle();
  await app.searchInput.press('Escape');
  await page.keyboard.press('0'); // whole trace: F must move the window, not find it there
  await app.idle();
  const sel = (await app.timeline()).selection;
  expect(sel.durNs).toBeGreaterThan(1000);
  await page.keyboard.press('f');
  await app.idle();
  const t = await app.timeline();
  // docs/viewer.md: "F zooms to the selection"; the viewport keeps a 10% margin each side.
  const margin = 0.1 * sel.durNs;
  expect(Math.abs(t.startNs - (sel.startNs - margin))).toBeLessThanOrEqual(0.01 * sel.durNs);
  expect(Math.abs(t.endNs - (sel.startNs + sel.durNs + margin))).toBeLessThanOrEqual(0.01 * sel.durNs);
});

test('Reset zoom shows the whole trace again; the ? button opens the key help', async ({ app, page }) => {
  await app.open();
  await app.waitForTimeline();
  const whole = await app.timeline();
  await page.keyboard.press('w');
  await page.keyboard.press('w');
  await page.keyboard.press('d');
  await app.idle();
  const zoomed = await app.timeline();
  expect(zoomed.endNs - zoomed.startNs).toBeLessThan((whole.endNs - whole.startNs) * 0.8);
  await page.getByTestId('zoom-reset').click();
  await app.idle();
  const reset = await app.timeline();
  expect(reset.startNs).toBeCloseTo(whole.startNs, 0);
  expect(reset.endNs).toBeCloseTo(whole.endNs, 0);

  await page.getByTestId('help-button').click();
  const help = page.getByTestId('help-overlay');
  await expect(help).toBeVisible();
  // It lists the keys the Navigation section of docs/viewer.md documents.
  const keys = await help.locator('kbd').allTextContents();
  expect(keys).toEqual(expect.arrayContaining(['W / S', 'A / D', 'wheel', 'F', '0 / Home', 'Esc', '?']));
  await expect(help.locator('tr', { hasText: 'wheel' }).first()).toContainText('Shift+wheel pans');
  await help.click(); // a click anywhere on it closes it
  await expect(help).toHaveCount(0);
});

test('wheel scrolls the lanes down and keeps the window; shift+wheel pans later in time', async ({ app, page }) => {
  await app.open();
  await app.upload(realFixture('param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json'));
  await app.waitForTimeline();
  // Zoomed in well inside the trace, so a pan is not stopped at its end.
  for (let i = 0; i < 4; i++) await page.keyboard.press('w');
  await app.idle();
  const t0 = await app.timeline();
  const content = Math.max(...t0.lanes.map((l) => l.y + l.height));
  expect(content, 'lanes taller than the canvas, so they can scroll').toBeGreaterThan(t0.height - t0.rulerH);
  const box = await app.canvas.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, 200);
  await app.idle();
  const t1 = await app.timeline();
  expect(t1.scrollY).toBeGreaterThan(t0.scrollY);
  expect([t1.startNs, t1.endNs]).toEqual([t0.startNs, t0.endNs]);

  await page.keyboard.down('Shift');
  await page.mouse.wheel(0, 100);
  await page.keyboard.up('Shift');
  await app.idle();
  // Down on the wheel with shift moves the window right by those 100 px, keeping its span.
  const t2 = await app.timeline();
  expect((t2.startNs - t1.startNs) / t1.nsPerPx).toBeCloseTo(100, 1);
  expect(t2.endNs - t2.startNs).toBeCloseTo(t1.endNs - t1.startNs, 0);
  expect(t2.scrollY).toBe(t1.scrollY);
});

test('search counts the matches the trace JSON holds; the next / previous buttons walk them in time order', async ({ app, page }) => {
  const file = realFixture(PARTX);
  // Independent count: complete events whose name or an arg value contains the text, ASCII
  // case-insensitive (docs/viewer.md search), read here from the JSON, in time order.
  const text = 'S16816GEMM';
  const has = (v) => JSON.stringify(v).toLowerCase().includes(text.toLowerCase());
  const matches = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents
    .filter((e) => e.ph === 'X' && (has(e.name) || Object.values(e.args || {}).some(has)))
    .sort((a, b) => a.ts - b.ts);
  expect(matches.length).toBeGreaterThan(2);
  await app.open();
  await app.upload(file);
  await app.waitForTimeline();
  await app.searchInput.fill(text);
  await app.idle();
  await expect(app.searchCount).toHaveText(`${matches.length} matches`);
  const walk = [];
  for (const button of ['search-next', 'search-next', 'search-next', 'search-prev']) {
    await page.getByTestId(button).click();
    await app.idle();
    const t = await app.timeline();
    walk.push({ rank: t.search.rank, durNs: t.selection.durNs });
  }
  const dur = (i) => Math.round(matches[i].dur * 1e3);
  expect(walk.map((w) => w.rank)).toEqual([1, 2, 3, 2]);
  for (const w of walk) expect(Math.abs(w.durNs - dur(w.rank - 1)), `match ${w.rank}`).toBeLessThanOrEqual(1);
  await expect(app.searchCount).toHaveText(`2 / ${matches.length}`);
});

test("a kernel's flow in leads to the launch with its correlation id in the trace JSON, and its flow out back", async ({ app, page }) => {
  const file = realFixture(PARTX);
  const events = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents;
  // The earliest GEMM kernel and, by its correlation id, the runtime call that launched it.
  const kernel = events.filter((e) => e.cat === 'kernel' && e.name.includes('s16816gemm')).sort((a, b) => a.ts - b.ts)[0];
  const launch = events.find((e) => e.ph === 'X' && e.cat === 'cuda_runtime' && e.args && e.args.correlation === kernel.args.correlation);
  await app.open();
  await app.upload(file);
  await app.waitForTimeline();
  await app.searchInput.fill('s16816gemm');
  await app.idle();
  await app.searchInput.press('Enter');
  await app.idle();
  const k = (await app.timeline()).selection;
  expect(Math.abs(k.durNs - kernel.dur * 1e3)).toBeLessThanOrEqual(1);
  await expect(page.getByTestId('flow-in')).toHaveCount(1);
  await page.getByTestId('flow-in').click();
  await app.idle();
  const l = (await app.timeline()).selection;
  expect(l.name).toBe(launch.name);
  expect(Math.abs(l.durNs - launch.dur * 1e3)).toBeLessThanOrEqual(1);
  await expect(page.locator('[data-testid="detail-arg"][data-key="correlation"] td')).toHaveText(String(kernel.args.correlation));
  const out = page.locator(`[data-testid="flow-out"][data-slice="${k.id}"]`);
  await expect(out).toHaveCount(1);
  await out.click();
  await app.idle();
  expect((await app.timeline()).selection.id).toBe(k.id);
});

/** A tooltip duration (`85.4 µs`, `1.23 ms`, `950 ns`, `2.1 s`) in µs. */
function tooltipUs(text) {
  const [, value, unit] = text.match(/([\d.]+) (ns|µs|ms|s)\b/);
  return Number(value) * { ns: 1e-3, 'µs': 1, ms: 1e3, s: 1e6 }[unit];
}

test('the hover tooltip names the slice and gives its duration and self time as the trace JSON has them', async ({ app, page }) => {
  const file = torchCpuFixture('mlp_train.pt.trace.json');
  await app.open();
  await app.upload(file);
  await app.waitForTimeline();
  await app.searchInput.fill('aten::linear');
  await app.idle();
  await app.searchInput.press('Enter');
  await app.idle();
  await app.searchInput.press('Escape');
  const sel = (await app.timeline()).selection;
  expect(sel.name).toBe('aten::linear');
  await page.keyboard.press('f');
  await app.idle();
  const at = await app.pointOf(sel.lane, sel.row, sel.startNs + sel.durNs / 2);
  await page.mouse.move(at.x, at.y);
  const tooltip = page.getByTestId('tooltip');
  await expect(tooltip.locator('.tt-name')).toHaveText('aten::linear');
  await expect(tooltip).toContainText('self');

  // The same slice in the JSON: its duration, and its self time = duration - its direct
  // children's on its thread (ops, annotations, runtime calls nested in it).
  const events = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents.filter((e) => e.ph === 'X');
  const origin = Math.min(...events.map((e) => e.ts));
  const slice = events.find((e) => e.name === sel.name && Math.abs((e.ts - origin) * 1000 - sel.startNs) < 1);
  expect(slice, 'the selected slice is in the JSON').toBeTruthy();
  expect(slice.dur * 1000).toBeCloseTo(sel.durNs, 0);
  const host = new Set(['cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver']);
  const inside = events.filter((e) => e !== slice && host.has(e.cat) && e.pid === slice.pid && e.tid === slice.tid
    && e.ts >= slice.ts && e.ts + e.dur <= slice.ts + slice.dur);
  const direct = inside.filter((c) => !inside.some((p) => p !== c && p.ts <= c.ts && c.ts + c.dur <= p.ts + p.dur
    && (p.dur > c.dur || p.ts < c.ts)));
  const self = slice.dur - direct.reduce((sum, c) => sum + c.dur, 0);
  expect(direct.length).toBeGreaterThan(0);
  const [dur, selfText] = (await tooltip.locator('div').nth(1).textContent()).split('·');
  // Three significant figures: within 0.5%.
  expect(Math.abs(tooltipUs(dur) - slice.dur)).toBeLessThanOrEqual(0.005 * slice.dur);
  expect(Math.abs(tooltipUs(selfText) - self)).toBeLessThanOrEqual(0.005 * self);
  await app.screenshot('tooltip');
});

test("the details' parent and child links are the slice's enclosing and directly nested events in the trace JSON", async ({ app, page }) => {
  const file = torchCpuFixture('mlp_train.pt.trace.json');
  await app.open();
  await app.upload(file);
  await app.waitForTimeline();
  await app.searchInput.fill('aten::linear');
  await app.idle();
  await app.searchInput.press('Enter');
  await app.idle();
  const sel = (await app.timeline()).selection;

  // Nesting recounted from the JSON: host events on the slice's thread by containment.
  const events = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents.filter((e) => e.ph === 'X');
  const origin = Math.min(...events.map((e) => e.ts));
  const slice = events.find((e) => e.name === sel.name && Math.abs((e.ts - origin) * 1000 - sel.startNs) < 1);
  const host = events.filter((e) => e !== slice && ['cpu_op', 'user_annotation'].includes(e.cat)
    && e.pid === slice.pid && e.tid === slice.tid);
  const contains = (p, c) => p.ts <= c.ts && c.ts + c.dur <= p.ts + p.dur && (p.dur > c.dur || p.ts < c.ts);
  const parent = host.filter((p) => contains(p, slice)).sort((a, b) => a.dur - b.dur)[0];
  const inside = host.filter((c) => contains(slice, c));
  const children = inside.filter((c) => !inside.some((p) => p !== c && contains(p, c))).sort((a, b) => a.ts - b.ts);
  expect(parent, 'aten::linear has an enclosing op').toBeTruthy();
  expect(children.length).toBeGreaterThan(0);

  await expect(page.getByTestId('parent')).toHaveAttribute('title', parent.name);
  const childTitles = await page.getByTestId('child').evaluateAll((els) => els.map((el) => el.title));
  expect(childTitles).toEqual(children.slice(0, childTitles.length).map((c) => c.name));
  expect(childTitles.length).toBeGreaterThan(0);

  // Following the links selects those events.
  await page.getByTestId('parent').click();
  await app.idle();
  let now = (await app.timeline()).selection;
  expect(now.name).toBe(parent.name);
  expect(Math.abs(now.startNs - (parent.ts - origin) * 1000)).toBeLessThanOrEqual(1);
  await page.getByTestId('child').filter({ hasText: slice.name }).first().click();
  await app.idle();
  now = (await app.timeline()).selection;
  expect(now.name).toBe(slice.name);
  await page.getByTestId('child').first().click();
  await app.idle();
  now = (await app.timeline()).selection;
  expect(now.name).toBe(children[0].name);
  expect(Math.abs(now.startNs - (children[0].ts - origin) * 1000)).toBeLessThanOrEqual(1);
});

test('dragging the canvas pans: the window moves by the dragged pixels and keeps its span', async ({ app, page }) => {
  await app.open();
  await app.upload(realFixture('param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json'));
  await app.waitForTimeline();
  // Zoomed in well inside the trace, so the pan is not stopped at either end.
  for (let i = 0; i < 4; i++) await page.keyboard.press('w');
  await app.idle();
  const t0 = await app.timeline();
  const box = await app.canvas.boundingBox();
  const y = box.y + t0.rulerH + 40;
  await page.mouse.move(box.x + box.width / 2, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 - 150, y, { steps: 10 });
  await page.mouse.up();
  await app.idle();
  // Dragged 150 px left: the content follows the pointer, so the window moves 150 px later.
  const t1 = await app.timeline();
  expect((t1.startNs - t0.startNs) / t0.nsPerPx).toBeCloseTo(150, 0);
  expect(t1.endNs - t1.startNs).toBeCloseTo(t0.endNs - t0.startNs, 0);
  expect(t1.range, 'a plain drag measures nothing').toBeNull();
});
