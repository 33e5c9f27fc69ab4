// Journey: a distributed run (docs/viewer.md#runs). The four dlrm ranks (of a world of 8) opened
// with the multi-file picker and through `?run=` (a manifest generated in a temp dir): the Run
// tab lands, world size 8 with ranks 4-7 reported missing; the rank table and the heatmap cells
// are the CLI's numbers (`kinetoscope run --json`), whether parse workers loaded files beside the
// load worker (the default on more than one core) or the load worker loaded all (`?workers=1`); a heatmap click opens that rank's timeline at
// that step and "Back to run" returns (main-thread long tasks meanwhile: journeys-bench.spec.js).
// The ranks timeline: one panel per rank, the clock switch moves each rank's origin by the
// CLI's clock offsets, a clicked collective kernel is marked on every rank with the CLI's
// arrival order. Also a folder, several files dropped with a broken one, and two ranks stacked
// (Compare tab). At 1440 and 800 px (issue #45): findings and the straggler come first, the
// CLI's straggler is outlined on the heatmap with its delay said first, the heatmap's "time not
// waiting in collectives" equals the CLI's step time minus wait, no card overflows, and the
// header says a run is open.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { test, expect } = require('../pages/app');
const { RunPage } = require('../pages/run');
const { CLI, realFixture, cliReport } = require('../support/fixtures');

const RANKS = [
  'param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json',
  'param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json',
  'param__dlrm_kineto__worker2_step_12.1694128201554.pt.trace.json',
  'param__dlrm_kineto__worker3_step_12.1694128201557.pt.trace.json',
];

/** `kinetoscope run --json FILES`, parsed. */
function cliRun(files) {
  return JSON.parse(execFileSync(CLI, ['run', '--json', ...files], { encoding: 'utf8', maxBuffer: 256 << 20 }));
}

/** Files loaded at once: on more than one core, parse workers loaded some whole (one per
 * other core, `?workers=N` but one) while the load worker loaded the others. */
async function expectLoadedBesideParseWorkers(app) {
  const cores = await app.page.evaluate(() => navigator.hardwareConcurrency);
  const by = await app.page.evaluate(() => window.kinetoscope.run.parseWorkers);
  expect(by.filter((w) => w === null).length, 'the load worker loaded files').toBeGreaterThan(0);
  if (cores > 1) {
    expect(by.filter((w) => w !== null).length, `parse workers loaded files: ${JSON.stringify(by)}`).toBeGreaterThan(0);
    expect(by.every((w) => w === null || w < Math.min(cores, 8) - 1)).toBe(true);
  }
}

/** The page's run equals the CLI's: rank table cells and heatmap cells. */
async function expectCliNumbers(run, files) {
  const state = await run.state();
  const rows = await run.rankRows();
  const cli = cliRun(files);
  expect(state.worldSize).toBe(cli.world_size);
  expect(rows.map((r) => r.rank)).toEqual(cli.ranks.map((r) => r.rank));
  for (const [i, r] of cli.ranks.entries()) {
    const b = r.breakdown_us;
    const want = {
      steps: r.steps, step_mean_us: r.step_mean_us, step_p95_us: r.step_p95_us, compute_us: b.compute,
      comm_non_overlapped_us: b.comm_non_overlapped, comm_overlapped_us: b.comm_overlapped, memory_us: b.memory,
      idle_us: b.idle, overlap_pct: r.overlap_pct, gpu_utilization_pct: r.gpu_utilization_pct, peak_memory_bytes: r.peak_memory_bytes,
    };
    for (const [key, value] of Object.entries(want)) {
      if (value === null) expect(rows[i][key], `rank ${r.rank} ${key}`).toBe('–');
      else expect(rows[i][key], `rank ${r.rank} ${key}`).toBe(value);
    }
  }
  const cells = state.heatmap.map((c) => [c.rank, c.step, c.durUs, c.outlier]).sort();
  expect(cells).toEqual(cli.steps.map((s) => [s.rank, s.step, s.dur_us, s.outlier]).sort());
}

/** `kinetoscope run --format ndjson FILES`: one object per line. */
function cliRunRows(files) {
  const out = execFileSync(CLI, ['run', '--format', 'ndjson', ...files], { encoding: 'utf8', maxBuffer: 256 << 20 });
  return out.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** World size 8, ranks 0-3 in, 4-7 reported missing. */
async function expectDlrmRun(app, run) {
  const s = await run.state();
  expect(s).toMatchObject({ worldSize: 8, ranks: [0, 1, 2, 3], loaded: 4, total: 4, pending: false });
  expect(s.diagnostics).toContain('run_missing_ranks');
  const missing = run.diagnostics.locator('[data-testid="run-diagnostic"][data-kind="run_missing_ranks"]');
  await expect(missing).toContainText(/4/);
  await expect(missing).toContainText(/7/);
  await expect(run.tab).toHaveClass(/active/);
  await expect(run.progress.getByTestId('run-progress-row')).toHaveCount(4);
  for (const r of [0, 1, 2, 3]) {
    await expect(run.progress.locator(`[data-testid="run-progress-row"][data-rank="${r}"]`)).toHaveAttribute('data-loaded', 'true');
  }
  await expect(run.rankTable.getByTestId('run-rank-row')).toHaveCount(4);
  await expect(run.stragglers).toBeVisible();
  await expect(run.offsets.getByTestId('run-offset')).toHaveCount(4);
  await expect(run.findings).toBeVisible();
  const rules = await run.findings.getByTestId('run-finding').evaluateAll((els) => els.map((e) => e.dataset.rule));
  expect(rules).toEqual(s.findings);
}

test('four dlrm ranks with the multi-file picker: Run tab, missing ranks, CLI numbers, heatmap click opens the rank at the step', async ({ app }) => {
  const files = RANKS.map(realFixture);
  const run = new RunPage(app);
  await app.open();
  await run.pick(files);
  await expectDlrmRun(app, run);
  await expectCliNumbers(run, files);
  await expectLoadedBesideParseWorkers(app);
  await app.screenshot('run');

  // A click on rank 2's first step opens rank 2's timeline at that step.
  const state = await run.state();
  const step = state.steps[0];
  await run.clickCell(2, step);
  const s = await app.state();
  expect(s.summary.file_name).toBe(RANKS[2]);
  await expect(app.summaryFile).toContainText(RANKS[2]);
  const mark = cliReport(files[2]).steps.find((x) => x.name === `ProfilerStep#${step}`);
  const t = await app.timeline();
  const [a, b] = [mark.start_us * 1000, (mark.start_us + mark.dur_us) * 1000];
  expect(t.startNs, 'the window starts before the step').toBeLessThanOrEqual(a);
  expect(t.endNs, 'the window ends after the step').toBeGreaterThanOrEqual(b);
  expect(t.endNs - t.startNs, 'zoomed to the step, not the whole trace').toBeLessThan((b - a) * 2);
  expect((await run.state()).focus).toEqual({ rank: 2, step });
  await app.screenshot('run-rank');

  // Back to the run, then rank 0 (its model was dropped: reloaded from its file).
  await run.back.click();
  await expect(run.tab).toHaveClass(/active/);
  await expect(run.heatmap).toBeVisible();
  await run.clickCell(0, step);
  expect((await app.state()).summary.file_name).toBe(RANKS[0]);

});

test('?run= manifest: the same run from URLs relative to the manifest; a single file afterwards is a single trace again', async ({ app, page }) => {
  const files = RANKS.map(realFixture);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kinetoscope-run-'));
  try {
    fs.mkdirSync(path.join(dir, 'ranks'));
    const ranks = files.map((f, rank) => {
      fs.copyFileSync(f, path.join(dir, 'ranks', path.basename(f)));
      return { url: `ranks/${path.basename(f)}`, rank };
    });
    fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify({ ranks }));
    // Served by the test from the temp dir: the page only sees same-origin URLs.
    await page.route('**/remote-run/**', (route) => {
      const rel = decodeURIComponent(new URL(route.request().url()).pathname.replace(/^.*\/remote-run\//, ''));
      const file = path.join(dir, rel);
      if (!file.startsWith(dir) || !fs.existsSync(file)) return route.fulfill({ status: 404, body: 'not found' });
      return route.fulfill({ status: 200, contentType: 'application/json', body: fs.readFileSync(file) });
    });
    const run = new RunPage(app);
    await run.open(`?run=${encodeURIComponent('/remote-run/run.json')}&workers=1`);
    await expectDlrmRun(app, run);
    await expectCliNumbers(run, files);
    expect(await app.page.evaluate(() => window.kinetoscope.run.parseWorkers), '?workers=1: every file loaded by the load worker').toEqual(files.map(() => null));
    await run.open(`?run=${encodeURIComponent('/remote-run/run.json')}`);
    await expectDlrmRun(app, run);
    await expectCliNumbers(run, files);
    await expectLoadedBesideParseWorkers(app);
    const names = await run.progress.getByTestId('run-progress-row').evaluateAll((rows) => rows.map((r) => r.querySelector('.name').textContent));
    expect(names).toEqual(RANKS);
    await app.screenshot('run-manifest');

    // One file: today's single-trace page, no Run tab.
    const one = await app.upload(files[1]);
    expect(one.status).toBe('ready');
    expect(one.summary.file_name).toBe(RANKS[1]);
    expect(await page.evaluate(() => window.kinetoscope.run)).toBeNull();
    await expect(run.tab).toBeHidden();
    await expect(app.page.getByTestId('tab-summary')).toHaveClass(/active/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a folder of ranks with the folder picker', async ({ app }) => {
  const files = RANKS.map(realFixture);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kinetoscope-folder-'));
  try {
    for (const f of files) fs.copyFileSync(f, path.join(dir, path.basename(f)));
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a trace');
    const run = new RunPage(app);
    await app.open();
    await run.pick(dir, run.folderInput);
    await expectDlrmRun(app, run);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('several files dropped together are a run; a broken file is a diagnostic, the others are analysed', async ({ app }) => {
  const files = RANKS.slice(0, 2).map(realFixture);
  const run = new RunPage(app);
  await app.open();
  await run.drop([
    ...files.map((f) => ({ name: path.basename(f), buffer: fs.readFileSync(f) })),
    { name: 'rank-9.pt.trace.json', buffer: Buffer.from('{"traceEvents": [{"ph": "X", "name"') },
  ]);
  const s = await run.state();
  expect(s).toMatchObject({ worldSize: 8, ranks: [0, 1], loaded: 3, total: 3, pending: false });
  expect(s.diagnostics).toEqual(expect.arrayContaining(['run_file_error', 'run_missing_ranks']));
  await expect(run.diagnostics.locator('[data-kind="run_file_error"]')).toContainText('rank-9.pt.trace.json');
  const broken = run.progress.locator('[data-testid="run-progress-row"][data-index="2"]');
  await expect(broken).toHaveAttribute('data-loaded', 'true');
  await expect(broken).toContainText('failed');
  await expect(run.rankTable.getByTestId('run-rank-row')).toHaveCount(2);
  const cli = cliRun(files);
  expect(s.heatmap.map((c) => [c.rank, c.step, c.durUs]).sort()).toEqual(cli.steps.map((x) => [x.rank, x.step, x.dur_us]).sort());
  // A finding's evidence opens its rank too.
  const evidence = run.findings.getByTestId('run-evidence').first();
  const rank = Number(await evidence.getAttribute('data-rank'));
  const before = await app.page.evaluate(() => window.kinetoscope.loads);
  await evidence.click();
  await app.waitForLoads(before + 1);
  expect((await app.state()).summary.file_name).toBe(path.basename(files[rank]));
  await expect(run.back).toBeVisible();
});

test('two ranks stacked: rank 0 over rank 3 in the Compare tab, aligned at their common step', async ({ app }) => {
  const files = RANKS.map(realFixture);
  const run = new RunPage(app);
  await app.open();
  await run.pick(files);
  await app.page.getByTestId('run-stack-a').selectOption('0');
  await app.page.getByTestId('run-stack-b').selectOption('3');
  const before = await app.page.evaluate(() => window.kinetoscope.loads);
  await app.page.getByTestId('run-stack').click();
  await app.waitForLoads(before + 2);
  await app.waitForStack();
  const c = await app.compare();
  expect(c).toMatchObject({ base: RANKS[0], cand: RANKS[3] });
  const step = cliReport(files[0]).steps[0];
  expect(c.stack.step).toBe(Number(step.name.split('#')[1]));
  // Time 0 of each panel: the step's CPU start in that rank's report (as compare.spec.js).
  expect(c.stack.baseStartNs).toBe(step.cpu_start_us * 1000);
  expect(c.stack.candStartNs).toBe(cliReport(files[3]).steps[0].cpu_start_us * 1000);
  await expect(app.page.getByTestId('tab-compare')).toHaveClass(/active/);
  await expect(app.page.getByTestId('compare-stack-base')).toBeVisible();
  await app.screenshot('run-stack');
  await run.back.click();
  await expect(run.tab).toHaveClass(/active/);
});

test('ranks timeline: one panel per rank, the clock switch moves origins by the CLI offsets, a collective marked on every rank', async ({ app }) => {
  const files = RANKS.map(realFixture);
  const run = new RunPage(app);
  await app.open();
  await run.pick(files);
  const first = await run.waitForRanks();
  expect(first.held).toEqual([0, 1, 2, 3]);
  await expect(app.page.getByTestId('run-stack-rank')).toHaveCount(4);
  for (const r of [0, 1, 2, 3]) await expect(run.rankPanel(r)).toBeVisible();
  // Every panel paints when its tiles arrive, before any pointer event (issue 45: 7 of 8 stayed
  // blank until the pointer crossed them): its canvas holds slices of several colors.
  for (const r of [0, 1, 2, 3]) {
    const canvas = run.rankPanel(r).getByTestId('run-stack-canvas');
    await expect.poll(() => canvas.evaluate((c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      const colors = new Set();
      for (let i = 0; i < data.length; i += 4 * 7) colors.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
      return colors.size;
    }), { message: `rank ${r}'s panel painted without a pointer event`, timeout: 10000 }).toBeGreaterThan(8);
  }
  for (const p of first.panels) {
    // GPU streams and the main CPU thread shown, the other threads folded.
    expect(p.lanes.length, `rank ${p.rank} lanes`).toBeGreaterThan(0);
    expect(p.lanes.some((l) => /stream/i.test(l.name)), `rank ${p.rank} has a GPU stream`).toBe(true);
    expect(p.view[1] - p.originNs, 'one window').toBeCloseTo(first.windowNs[1], 0);
  }
  expect(first.panels.some((p) => p.folded > 0), 'the other CPU threads start folded').toBe(true);
  await app.screenshot('run-ranks');

  // As recorded, the earliest rank is at 0; aligned by collectives, each rank moves by its
  // offset (relative to rank 0's move: the axis' start moves too).
  const cli = cliRun(files);
  const offset = (rank) => cli.offsets_us.find((o) => o.rank === rank).offset_us;
  const recorded = await run.setClock('recorded');
  expect(Math.max(...recorded.panels.map((p) => p.originNs))).toBe(0);
  const aligned = await run.setClock('collectives');
  const moved = (rank) => aligned.panels.find((p) => p.rank === rank).originNs - recorded.panels.find((p) => p.rank === rank).originNs;
  for (const r of [1, 2, 3]) {
    const want = (offset(r) - offset(0)) * 1000;
    expect(Math.abs(moved(r) - moved(0) - want), `rank ${r} moved by its offset (${want} ns)`).toBeLessThanOrEqual(2);
  }

  // Search every rank for the NCCL kernels: counts per rank, summed.
  await run.ranksSearch.fill('ncclKernel');
  await app.page.waitForFunction(() => {
    const s = window.kinetoscope.run.stack.search;
    return s && s.complete && s.text === 'ncclKernel';
  }, null, { polling: 50 });
  let s = await run.waitForRanks();
  expect(s.search.total).toBe(s.search.perRank.reduce((a, b) => a + b, 0));
  expect(s.search.total).toBeGreaterThan(0);

  // Click rank 0's first NCCL kernel: its instance is marked on every rank, in the CLI's order.
  const hit = s.search.hits.find((h) => h.rank === 0);
  expect(hit, 'rank 0 has an NCCL kernel').toBeTruthy();
  let panel = s.panels.find((p) => p.rank === 0);
  const lane = panel.lanes.find((l) => l.lane === hit.lane);
  const canvas = run.rankPanel(0).getByTestId('run-stack-canvas');
  const y = () => s.rulerH + lane.y - panel.scrollY + 3 + hit.row * 18 + 9;
  if (y() > s.rulerH + panel.height - 4) {
    await canvas.hover({ position: { x: 50, y: s.rulerH + 10 } });
    await app.page.mouse.wheel(0, lane.y);
    s = await run.waitForRanks();
    panel = s.panels.find((p) => p.rank === 0);
  }
  const x = (hit.startNs + hit.durNs / 2 - panel.view[0]) / s.nsPerPx;
  await canvas.click({ position: { x, y: y() } });
  await app.page.waitForFunction(() => window.kinetoscope.run.stack.collective !== null, null, { polling: 50 });
  s = await run.waitForRanks();
  expect(s.selection.rank).toBe(0);
  expect(s.selection.name).toMatch(/nccl/i);
  expect(s.highlighted).toEqual([0, 1, 2, 3]);
  for (const p of s.panels) {
    const m = s.collective.members.find((x) => x.rank === p.rank);
    expect(p.band, `rank ${p.rank} band`).toEqual([m.startNs, m.endNs]);
  }
  const rows = cliRunRows(files).filter((r) => r.kind === 'collective' && r.key === s.collective.key
    && r.step === s.collective.step && r.index_in_step === s.collective.indexInStep);
  expect(rows.length).toBe(4);
  const order = (list, rank, arrival) => list.map((m) => [rank(m), arrival(m)]).sort((a, b) => a[0] - b[0]);
  expect(order(s.collective.members, (m) => m.rank, (m) => m.arrival)).toEqual(order(rows, (r) => r.rank, (r) => r.arrival_order));
  expect(s.collective.lastRank).toBe(rows.find((r) => r.last).rank);
  // The collective's panel: its heading names it, its rows are the members in arrival order
  // with their rank and wait as the hook holds them.
  const box = app.page.getByTestId('run-stack-collective');
  await expect(box).toContainText(s.collective.key);
  await expect(box).toContainText(`step ${s.collective.step}`);
  await expect(app.page.getByTestId('run-stack-member')).toHaveCount(4);
  const shown = await box.getByTestId('run-stack-member').evaluateAll((els) => els.map((e) => [Number(e.dataset.rank), Number(e.dataset.arrival), Number(e.dataset.wait)]));
  const byArrival = [...s.collective.members].sort((a, b) => a.arrival - b.arrival);
  expect(shown).toEqual(byArrival.map((m) => [m.rank, m.arrival, m.waitUs]));
  expect(shown.map((m) => m[1])).toEqual([0, 1, 2, 3]);
  expect(shown[3][0], 'the last to arrive is the last row').toBe(s.collective.lastRank);
  await app.screenshot('run-ranks-collective');

  // Enter selects the next match across ranks, brought into view. Each panel is scrolled to
  // its bottom first, so the other ranks' matches start off screen.
  for (const p of s.panels) {
    await run.rankPanel(p.rank).getByTestId('run-stack-canvas').hover({ position: { x: 50, y: s.rulerH + 10 } });
    await app.page.mouse.wheel(0, 20000);
  }
  s = await run.waitForRanks();
  const rowOnScreen = (st, h) => {
    const p = st.panels.find((q) => q.rank === h.rank);
    const l = p.lanes.find((q) => q.lane === h.lane);
    const y = l ? l.y + 3 + (h.row - (l.first_row ?? 0)) * 18 : -1;
    return l !== undefined && y >= p.scrollY && y <= p.scrollY + p.height;
  };
  const offBefore = s.search.hits.filter((h) => h.rank !== s.selection.rank && !rowOnScreen(s, h));
  expect(offBefore.length, 'some other rank\'s match is scrolled away before Enter').toBeGreaterThan(0);
  const was = s.selection.id;
  await run.ranksSearch.press('Enter');
  await app.page.waitForFunction((id) => {
    const sel = window.kinetoscope.run.stack.selection;
    return sel && sel.id !== id && sel.name;
  }, was, { polling: 50 });
  s = await run.waitForRanks();
  expect(s.selection.name).toMatch(/ncclKernel/);
  const origin = s.panels.find((p) => p.rank === s.selection.rank).originNs;
  const at = s.selection.startNs - origin;
  expect(at, 'the match is in the window').toBeGreaterThanOrEqual(s.windowNs[0]);
  expect(at).toBeLessThanOrEqual(s.windowNs[1]);
  // Every other panel is scrolled to its own first match's row (folded groups opened).
  for (const h of s.search.hits.filter((x) => x.rank !== s.selection.rank)) {
    expect(rowOnScreen(s, h), `rank ${h.rank}'s match row on screen`).toBe(true);
  }

  // At a step: each rank's time 0 is that step's start in its own trace (the CLI's report).
  const stepped = await run.setClock('step');
  expect(stepped.step).toBe(stepped.steps[0]);
  for (const p of stepped.panels) {
    const mark = cliReport(files[p.rank]).steps.find((x) => x.name === `ProfilerStep#${stepped.step}`);
    expect(p.originNs, `rank ${p.rank} at step ${stepped.step}`).toBe(mark.cpu_start_us * 1000);
  }

  // W/S/A/D move every rank together.
  const before = s.windowNs;
  await canvas.hover({ position: { x: 300, y: s.rulerH + 5 } });
  await app.page.keyboard.press('w');
  s = await run.waitForRanks();
  expect(s.windowNs[1] - s.windowNs[0]).toBeLessThan(before[1] - before[0]);
  for (const p of s.panels) expect(p.view[0] - p.originNs).toBeCloseTo(s.windowNs[0], 0);
});

/** Every card of the Run tab with its widths (CSS px): content wider than the box overflows. */
function cardWidths(page) {
  return page.evaluate(() => [...document.querySelectorAll('[data-testid="run"] .card')].map((c) => ({
    card: c.dataset.testid || (c.querySelector('h2') || c).textContent.trim().slice(0, 40),
    scrollWidth: c.scrollWidth,
    clientWidth: c.clientWidth,
  })));
}

/** Waits until the heatmap reports `mode` with every cell drawn in it; returns the run state. */
async function heatmapIn(app, mode) {
  await app.page.waitForFunction((m) => {
    const r = window.kinetoscope.run;
    return r && r.heatmapMode === m && r.heatmap.length > 0
      && r.heatmap.every((c) => c.valueUs === (m === 'step' ? c.durUs : Math.max(0, c.durUs - c.waitUs)));
  }, mode, { polling: 50 });
  return new RunPage(app).state();
}

for (const width of [1440, 800]) {
  test(`run tab at ${width} px: findings and the straggler first, the straggler outlined on the heatmap, step time or time not waiting, no card overflows, the header says a run is open`, async ({ app }) => {
    const { page } = app;
    await page.setViewportSize({ width, height: 900 });
    const files = RANKS.map(realFixture);
    const run = new RunPage(app);
    await app.open();
    await run.pick(files);
    await expectDlrmRun(app, run);
    const cli = cliRun(files);
    await expect(page.getByTestId('run-badge')).toHaveText(`Run · 4 of ${cli.world_size} ranks`);

    // The answer first: findings, then the straggler, before the heatmap and the tables.
    const ids = ['run-findings', 'run-stragglers', 'run-overview', 'run-heatmap', 'run-rank-table', 'run-offsets'];
    const order = await page.evaluate((list) => {
      const all = [...document.querySelectorAll('[data-testid="run"] [data-testid]')].map((e) => e.dataset.testid);
      return list.map((id) => all.indexOf(id));
    }, ids);
    expect(order.every((i) => i >= 0), `${ids} all shown: ${order}`).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const rules = await run.findings.getByTestId('run-finding').evaluateAll((els) => els.map((e) => e.dataset.rule));
    expect(rules[0]).toBe('straggler-rank');

    // The straggler: the CLI's, outlined on the heatmap, its delay said first.
    expect(cli.straggler).toBe(2);
    const delay = cli.stragglers.find((s) => s.rank === cli.straggler).why.delay;
    await expect(run.heatmap).toHaveAttribute('data-straggler', String(cli.straggler));
    await expect(page.getByTestId('run-heatmap-straggler')).toHaveAttribute('data-rank', String(cli.straggler));
    const said = page.getByTestId('run-straggler-delay');
    await expect(said).toHaveAttribute('data-rank', String(cli.straggler));
    await expect(said).toContainText(delay.text);
    const why = await run.stragglers.locator(`[data-testid="run-straggler"][data-rank="${cli.straggler}"] td.why`).textContent();
    expect(why.startsWith(delay.text), why).toBe(true);

    // Step time, then time not waiting in collectives: the CLI's step and wait figures.
    const step = await heatmapIn(app, 'step');
    expect(step.straggler).toBe(cli.straggler);
    const cliCell = (c) => cli.steps.find((s) => s.rank === c.rank && s.step === c.step);
    for (const c of step.heatmap) expect([c.rank, c.valueUs, c.waitUs]).toEqual([c.rank, cliCell(c).dur_us, cliCell(c).wait_us]);
    const lowest = (cells) => cells.reduce((a, b) => (b.valueUs < a.valueUs ? b : a)).rank;
    const highest = (cells) => cells.reduce((a, b) => (b.valueUs > a.valueUs ? b : a)).rank;
    expect(lowest(step.heatmap), 'by step time the straggler looks fastest').toBe(cli.straggler);
    await app.screenshot(`run-${width}-step-time`);
    await page.locator('[data-testid="run-heat-mode"][data-mode="not-waiting"]').click();
    const busy = await heatmapIn(app, 'not-waiting');
    await expect(run.heatmap).toHaveAttribute('data-mode', 'not-waiting');
    for (const c of busy.heatmap) {
      const waited = cli.collectives.per_rank.find((r) => r.rank === c.rank).wait_us;
      // One step per rank in these traces: the step's wait is the rank's whole wait.
      expect(c.valueUs, `rank ${c.rank}`).toBeCloseTo(cliCell(c).dur_us - waited, 6);
    }
    expect(highest(busy.heatmap), 'without the waits the straggler is the slowest').toBe(cli.straggler);
    await app.screenshot(`run-${width}-not-waiting`);

    // No card is wider than its box.
    const cards = await cardWidths(page);
    console.log(`run tab at ${width} px: ${JSON.stringify(cards)}`);
    expect(cards.length).toBeGreaterThanOrEqual(ids.length);
    for (const c of cards) expect(c.scrollWidth, `${c.card} at ${width} px`).toBeLessThanOrEqual(c.clientWidth);
  });
}
