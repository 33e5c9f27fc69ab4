// Journey: a link copied from a view, opened by a teammate in a fresh browser (a new context:
// no storage, no cache, no history). One test per part of the view the fragment carries: each
// table's sort and scope, the findings tab, the compare view and the run view. Each builds the
// view by hand as a user would (keys, clicks), takes the link "Copy link" copies
// (`window.kinetoscope.link`) and asserts the same view in the new context.
// share.spec.js covers the window, selection, range and search; share-keys.spec.js opens
// hand-written fragments.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, expect, AppPage, fresh } = require('../pages/app');
const { RunPage } = require('../pages/run');
const { realFixture } = require('../support/fixtures');
const { serve } = require('../support/servers');

const DIST = path.resolve(__dirname, '..', process.env.E2E_DIST || '../dist');

/** The table part of the view: tab, sort, scope, window. */
async function tableView(app) {
  const t = await app.table();
  const tl = await app.timeline();
  const tab = await app.page.evaluate(() => document.querySelector('.tabs button.active')?.dataset.testid);
  return { tab, kind: t && t.kind, sort: t && t.sort, scope: t && t.scope, window: [Math.round(tl.startNs), Math.round(tl.endNs)] };
}

/** The copied link once the fragment caught up with the view. */
async function copiedLink(page, mustHave) {
  await page.waitForFunction((keys) => keys.every((k) => window.kinetoscope.link.includes(k)), mustHave);
  return page.evaluate(() => window.kinetoscope.link);
}

test('ops: W x3, Ops, sort by calls: the link reopens sorted by calls at that window', async ({ app, page, browser }) => {
  await app.open();
  await app.waitForTimeline();
  for (let i = 0; i < 3; i++) await page.keyboard.press('w');
  await app.openTab('ops');
  await page.getByTestId('col-calls').click();
  await app.idle();
  const before = await tableView(app);
  expect(before).toMatchObject({ tab: 'tab-ops', kind: 'ops', sort: { key: 'calls' } });
  const link = await copiedLink(page, ['tab=ops', 'sort=calls']);
  const other = await fresh(browser, link);
  try {
    expect(await tableView(other.app)).toEqual(before);
    await expect(other.app.page.getByTestId('col-calls')).toHaveAttribute('data-sort', before.sort.desc ? 'desc' : 'asc');
  } finally {
    await other.close();
  }
});

test('kernels: step scope and a sort come back', async ({ app, page, browser }) => {
  await app.open();
  await app.waitForTimeline();
  await app.openTab('kernels');
  await page.getByTestId('table-scope').selectOption('step');
  await app.pickStep('table-step', 3);
  await page.getByTestId('col-calls').click();
  await page.getByTestId('col-calls').click();
  await app.idle();
  const before = await tableView(app);
  expect(before).toMatchObject({ tab: 'tab-kernels', scope: 'step', sort: { key: 'calls' } });
  const link = await copiedLink(page, ['tab=kernels', 'scope=step', 'sort=calls']);
  const other = await fresh(browser, link);
  try {
    expect(await tableView(other.app)).toEqual(before);
    await expect(other.app.page.getByTestId('table-step')).toHaveValue('3');
  } finally {
    await other.close();
  }
});

test('ops: range scope (a shift-drag range) comes back', async ({ app, page, browser }) => {
  await app.open();
  await app.waitForTimeline();
  const box = await app.canvas.boundingBox();
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.5);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await app.openTab('ops');
  await page.getByTestId('table-scope').selectOption('range');
  await app.idle();
  const before = await tableView(app);
  expect(before.scope).toBe('range');
  const link = await copiedLink(page, ['tab=ops', 'scope=range', 'range=']);
  const other = await fresh(browser, link);
  try {
    expect(await tableView(other.app)).toEqual(before);
    expect((await other.app.timeline()).range.map(Math.round)).toEqual((await app.timeline()).range.map(Math.round));
  } finally {
    await other.close();
  }
});

test('steps: a sort comes back', async ({ app, page, browser }) => {
  await app.open();
  await app.waitForTimeline();
  await app.openTab('steps');
  // Column headers only, not their `col-resize` drag handles.
  await page.locator('[data-testid^="col-"]:not([data-testid="col-resize"])').nth(1).click();
  await app.idle();
  const before = await tableView(app);
  expect(before.kind).toBe('steps');
  expect(before.sort).not.toBeNull();
  const link = await copiedLink(page, ['tab=steps', 'sort=']);
  const other = await fresh(browser, link);
  try {
    expect(await tableView(other.app)).toEqual(before);
  } finally {
    await other.close();
  }
});

test('findings: the tab and the active finding come back', async ({ app, page, browser }) => {
  await app.open();
  await app.waitForTimeline();
  await app.openTab('findings');
  const item = page.getByTestId('finding').nth(1);
  const rule = await item.getAttribute('data-rule');
  await item.click();
  await app.idle();
  const link = await copiedLink(page, ['tab=findings', `finding=${rule}`]);
  const other = await fresh(browser, link);
  try {
    await expect(other.app.page.getByTestId('tab-findings')).toHaveClass(/active/);
    await expect(other.app.page.locator(`[data-testid="finding"][data-rule="${rule}"]`)).toHaveAttribute('data-active', 'true');
    expect(await other.app.page.evaluate(() => window.kinetoscope.findings.active)).toBe(rule);
  } finally {
    await other.close();
  }
});

test('compare: step, sorts and the tab come back', async ({ app, page, browser }) => {
  const demo = './public/demo.pt.trace.json.gz';
  await app.open(`?url=${demo}&base=${demo}`, 2);
  await app.waitForStack();
  await expect(page.getByTestId('tab-compare')).toHaveClass(/active/);
  await page.getByTestId('compare-ops').getByTestId('col-self_cpu_delta').click();
  await page.getByTestId('compare-kernels').getByTestId('col-total_delta').click();
  const step = (await app.stack()).steps[2];
  await app.pickStep('compare-step', step);
  await app.waitForStack();
  const before = await app.compare();
  expect(before.stack.step).toBe(step);
  const link = await copiedLink(page, ['tab=compare', `cstep=${step}`, 'csort=self_cpu_delta', 'cksort=total_delta']);
  const context = await browser.newContext();
  try {
    const other = new AppPage(await context.newPage());
    await other.page.goto(link);
    await other.waitForLoads(2);
    await other.waitForStack();
    await expect(other.page.getByTestId('tab-compare')).toHaveClass(/active/);
    const after = await other.compare();
    expect(after.sort).toEqual(before.sort);
    expect(after.kernelSort).toEqual(before.kernelSort);
    expect(after.stack.step).toBe(step);
    await expect(other.page.getByTestId('compare-step')).toHaveValue(String(step));
  } finally {
    await context.close();
  }
});

test('run: a ?run= link comes back as the run, at the tab and sort it was copied at', async ({ app, page, browser }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kinetoscope-share-run-'));
  const names = ['hta__trace_filter__sampled_rank-0.json.gz', 'hta__trace_filter__sampled_rank-1.json.gz'];
  for (const n of names) fs.copyFileSync(realFixture(n), path.join(dir, n));
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify({ ranks: names.map((url, rank) => ({ url, rank })) }));
  const site = await serve({ '/k/': DIST, '/runs/job/': dir });
  try {
    await page.goto(`${site.origin}/k/?run=../runs/job/run.json`);
    const run = new RunPage(app);
    await run.waitForRun(1);
    await expect(run.tab).toHaveClass(/active/);
    const runLink = await copiedLink(page, ['?run=', 'tab=run']);
    const ranks = (await run.state()).ranks;

    // The Run tab itself.
    const context = await browser.newContext();
    try {
      const other = new RunPage(new AppPage(await context.newPage()));
      await other.page.goto(runLink);
      await other.waitForRun(1);
      await expect(other.tab).toHaveClass(/active/);
      expect((await other.state()).ranks).toEqual(ranks);
    } finally {
      await context.close();
    }

    // A table of the run's trace, sorted: the run, that tab and that sort.
    await app.openTab('ops');
    await page.getByTestId('col-calls').click();
    await app.idle();
    const before = await tableView(app);
    const opsLink = await copiedLink(page, ['?run=', 'tab=ops', 'sort=calls']);
    const second = await browser.newContext();
    try {
      const other = new AppPage(await second.newPage());
      await other.page.goto(opsLink);
      await other.waitForLoads(1);
      // The heatmap is drawn only on the Run tab: wait for the run's files and analysis.
      await other.page.waitForFunction(() => {
        const r = window.kinetoscope.run;
        return r && !r.pending && r.loaded === r.total && r.ranks.length === 2;
      });
      await other.waitForTimeline();
      await other.idle();
      expect(await tableView(other)).toEqual(before);
      await expect(other.page.getByTestId('tab-run')).toBeVisible();
    } finally {
      await second.close();
    }
  } finally {
    await site.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
