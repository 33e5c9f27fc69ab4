// Benchmark (not a test): main-thread long tasks (over 50 ms, the page's `longtask` observer,
// `window.kinetoscope.longTasks`) during four journeys whose functional specs check what they
// show, not how fast: explaining steps (explain.spec.js), exporting a report (export.spec.js),
// a run's tab built from four dlrm ranks and its ranks timeline driven (run.spec.js). A long task
// depends on the machine's load, so these are printed, never asserted: one JSON line per journey
// and run, `long_tasks` the count in the journey's window, `longest_ms`, and `long_tasks_ms`
// ([start relative to the window's start, duration] of each). Skipped unless
// KINETOSCOPE_BENCH_JOURNEYS is set (scripts/bench sets it); KINETOSCOPE_BENCH_JOURNEY_RUNS runs
// each journey that many times (default 3), each in a fresh page.
const { test, expect, AppPage } = require('../pages/app');
const { RunPage } = require('../pages/run');
const { realFixture } = require('../support/fixtures');

const enabled = Boolean(process.env.KINETOSCOPE_BENCH_JOURNEYS);
const RUNS = Number(process.env.KINETOSCOPE_BENCH_JOURNEY_RUNS || 3);

const RESNET = 'kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz';
const RANKS = [
  'param__dlrm_kineto__worker0_step_12.1694128201545.pt.trace.json',
  'param__dlrm_kineto__worker1_step_12.1694128201556.pt.trace.json',
  'param__dlrm_kineto__worker2_step_12.1694128201554.pt.trace.json',
  'param__dlrm_kineto__worker3_step_12.1694128201557.pt.trace.json',
];

/** Page time now (ms), the start of a journey's window. */
function now(page) {
  return page.evaluate(() => performance.now());
}

/** Prints the long tasks that started at or after `from` (page ms) as one JSON line. */
async function report(page, journey, run, from) {
  const { list } = await page.evaluate(() => window.kinetoscope.longTasks);
  const mine = list.filter(([start]) => start >= from);
  console.log(JSON.stringify({
    bench: 'journey_long_tasks', journey, run, long_tasks: mine.length,
    longest_ms: Math.round(mine.reduce((m, [, d]) => Math.max(m, d), 0)),
    long_tasks_ms: mine.map(([start, d]) => [Math.round(start - from), Math.round(d)]),
  }));
}

/** Runs `journey(app)` RUNS times, each in a fresh context; it returns the window's start. */
async function repeat(browser, baseURL, name, journey) {
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, baseURL });
    const app = new AppPage(await context.newPage());
    const from = await journey(app);
    expect(app.pageErrors).toEqual([]);
    await report(app.page, name, run, from);
    await context.close();
  }
}

test.describe('journey long tasks benchmark', () => {
  test.skip(!enabled, 'set KINETOSCOPE_BENCH_JOURNEYS (scripts/bench does)');
  test.setTimeout(20 * 60_000);

  test('explain: the Steps tab explains the slowest step, then another', async ({ browser, baseURL }) => {
    await repeat(browser, baseURL, 'explain', async (app) => {
      await app.open();
      await app.upload(realFixture(RESNET));
      const from = await now(app.page);
      await app.openTab('steps');
      const panel = app.page.getByTestId('step-explain');
      await expect(panel).toHaveAttribute('data-step', /\d+/);
      const shown = await panel.getAttribute('data-step');
      const other = (await app.column('step-row', 'step')).find((n) => String(n) !== shown);
      await app.page.locator(`[data-testid="step-row"]:has(td[data-key="step"][data-value="${other}"])`).click();
      await app.idle();
      await expect(panel).toHaveAttribute('data-step', String(other));
      return from;
    });
  });

  test('export: Export report on the demo', async ({ browser, baseURL }) => {
    await repeat(browser, baseURL, 'export', async (app) => {
      await app.open('?url=public/demo.pt.trace.json.gz');
      const from = await now(app.page);
      await Promise.all([app.page.waitForEvent('download'), app.page.getByTestId('export-report').click()]);
      await app.idle();
      return from;
    });
  });

  test('run: four dlrm ranks picked, from the ranks in to the Run tab built', async ({ browser, baseURL }) => {
    await repeat(browser, baseURL, 'run_tab', async (app) => {
      const run = new RunPage(app);
      await app.open();
      const inAt = await run.pick(RANKS.map(realFixture));
      await expect(run.rankTable.getByTestId('run-rank-row')).toHaveCount(4);
      await app.idle();
      return inAt;
    });
  });

  test('ranks timeline: four ranks held, clocks switched, searched, zoomed', async ({ browser, baseURL }) => {
    await repeat(browser, baseURL, 'ranks_timeline', async (app) => {
      const run = new RunPage(app);
      await app.open();
      const inAt = await run.pick(RANKS.map(realFixture));
      const first = await run.waitForRanks();
      expect(first.held).toEqual([0, 1, 2, 3]);
      await run.setClock('recorded');
      await run.setClock('collectives');
      await run.ranksSearch.fill('ncclKernel');
      await app.page.waitForFunction(() => {
        const s = window.kinetoscope.run.stack.search;
        return s && s.complete && s.text === 'ncclKernel';
      }, null, { polling: 50 });
      await run.waitForRanks();
      await run.ranksSearch.press('Enter');
      await run.waitForRanks();
      await run.setClock('step');
      const s = await run.waitForRanks();
      const canvas = run.rankPanel(s.held[0]).getByTestId('run-stack-canvas');
      await canvas.hover({ position: { x: 300, y: s.rulerH + 5 } });
      await app.page.keyboard.press('w');
      await run.waitForRanks();
      return inAt;
    });
  });
});
