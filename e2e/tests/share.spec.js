// Journey: share links and static hosting. The site is served from a sub-path with a trace next
// to it; a link with a view opens that view; the fragment follows navigation and "Copy link"
// copies a URL that reopens the same view in a new page (pinned lane groups included). A local file's link asks for the file.
// Fetch failures (404, CORS) explain themselves; trace names with markup stay text.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, expect, AppPage } = require('../pages/app');
const { realFixture, RESULTS_DIR } = require('../support/fixtures');
const { serve } = require('../support/servers');

const DIST = path.resolve(__dirname, '..', process.env.E2E_DIST || '../dist');
const PARTX = 'partx__profiler_trace_single_sample.json';

/** The parts of the view a link must restore. */
async function view(app) {
  const t = await app.timeline();
  const tab = await app.page.evaluate(() => document.querySelector('.tabs button.active')?.dataset.testid);
  // The main timeline's group labels top to bottom (pinned groups first).
  const groups = await app.page.locator('.tl-body:not(.stack-body) [data-testid="group-label"]').evaluateAll((els) => els
    .map((e) => [parseFloat(e.style.top), e.textContent.slice(2)]).sort((a, b) => a[0] - b[0]).map((x) => x[1]));
  return {
    groups,
    start: Math.round(t.startNs), end: Math.round(t.endNs),
    selection: t.selection && t.selection.id, range: t.range && t.range.map(Math.round),
    search: t.search && t.search.text, tab,
  };
}

/** Opens `url` in a fresh page of the same context and waits for its trace and view. */
async function openLink(context, url) {
  const page = await context.newPage();
  const app = new AppPage(page);
  await page.goto(url);
  await app.waitForLoads(1);
  await app.waitForTimeline();
  await app.idle();
  return app;
}

test('served from a sub-path: ?url= + fragment opens the view; navigate, copy link, reopen', async ({ app, page, context }) => {
  const site = await serve({ '/team/kinetoscope/': DIST, '/team/traces/partx.json': realFixture(PARTX) });
  try {
    const base = `${site.origin}/team/kinetoscope/?url=../traces/partx.json`;
    await page.goto(base);
    await app.waitForLoads(1);
    await app.waitForTimeline();
    expect((await app.state()).summary.file_name).toBe('partx.json');
    const entries = await page.evaluate(() => history.length);

    // Navigate: zoom, search and select a match, shift-drag a range, open the ops tab.
    await page.keyboard.press('w');
    await page.keyboard.press('w');
    await app.searchInput.fill('aten::addmm');
    await app.idle();
    await app.searchInput.press('Enter');
    await app.idle();
    await app.searchInput.press('Escape');
    const box = await app.canvas.boundingBox();
    await page.keyboard.down('Shift');
    await page.mouse.move(box.x + box.width * 0.2, box.y + box.height * 0.6);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.6, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    // Pin the last lane group to the top: it is drawn first, the others keep their order.
    const order = (await view(app)).groups;
    expect(order.length).toBeGreaterThan(1);
    await page.locator('.tl-body:not(.stack-body) [data-testid="group-pin"]').last().click();
    await app.idle();
    expect((await view(app)).groups).toEqual([order[order.length - 1], ...order.slice(0, -1)]);
    await app.openTab('ops');
    await app.idle();
    const before = await view(app);
    expect(before.selection).not.toBeNull();
    expect(before.range).not.toBeNull();
    expect(before.tab).toBe('tab-ops');

    // The fragment follows (debounced replaceState, no history entries).
    await page.waitForFunction(() => location.hash.includes('tab=ops') && location.hash.includes('sel=') && location.hash.includes('pin='));
    expect(await page.evaluate(() => history.length)).toBe(entries);

    // Copy link -> clipboard -> a new page shows the same view.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.origin });
    await page.getByTestId('copy-link').click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await page.evaluate(() => window.kinetoscope.link));
    expect(copied.startsWith(base)).toBe(true);
    const other = await openLink(context, copied);
    expect(await view(other)).toEqual(before);
    await other.screenshot('share-reopened');

    // A hand-written link: view range and tab.
    const t0 = 10_000_000; const t1 = 12_000_000;
    const third = await openLink(context, `${base}#t=${t0},${t1}&tab=kernels`);
    const v = await view(third);
    expect([v.start, v.end]).toEqual([t0, t1]);
    expect(v.tab).toBe('tab-kernels');
  } finally {
    await site.close();
  }
});

test("a local file's link asks for the file, then restores the view", async ({ app, page, context }) => {
  await app.open();
  const file = realFixture(PARTX);
  await app.upload(file);
  await app.waitForTimeline();
  await page.keyboard.press('w');
  await app.openTab('steps');
  await app.idle();
  await page.waitForFunction(() => location.hash.includes('file='));
  const link = await page.evaluate(() => window.kinetoscope.link);
  expect(link).toContain(`file=${PARTX}`);
  const before = await view(app);

  const page2 = await context.newPage();
  const app2 = new AppPage(page2);
  await page2.goto(link);
  const prompt = page2.getByTestId('link-file-prompt');
  await expect(prompt).toContainText(PARTX);
  await expect(prompt).toContainText('never uploaded');
  expect(await page2.evaluate(() => window.kinetoscope.loads)).toBe(0);
  await prompt.getByTestId('file-input').setInputFiles(file);
  await app2.waitForLoads(1);
  await app2.waitForTimeline();
  expect(await view(app2)).toEqual(before);
});

test('a URL that 404s and one blocked by CORS each explain themselves', async ({ app }) => {
  await app.open('?url=./no-such-trace.json');
  let s = await app.state();
  expect(s.status).toBe('error');
  expect(s.error.message).toContain('HTTP 404');
  await expect(app.error).toContainText('no such file');

  const other = await serve({ '/t.json': realFixture(PARTX) }); // no CORS header
  try {
    await app.open(`?url=${encodeURIComponent(`${other.origin}/t.json`)}`);
    s = await app.state();
    expect(s.status).toBe('error');
    expect(s.error.message).toContain('CORS');
    expect(s.error.message).toContain('Access-Control-Allow-Origin');
    await expect(app.error).toContainText('Access-Control-Allow-Origin');
  } finally {
    await other.close();
  }

  // With the header, the same cross-origin file loads.
  const cors = await serve({ '/t.json': realFixture(PARTX) }, { 'access-control-allow-origin': '*' });
  try {
    await app.open(`?url=${encodeURIComponent(`${cors.origin}/t.json`)}`);
    expect((await app.state()).status).toBe('ready');
  } finally {
    await cors.close();
  }
});

test('names with markup render as text and run nothing; no CSP violation', async ({ app, page }) => {
  const violations = [];
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()); });
  page.on('dialog', (d) => { violations.push(`dialog: ${d.message()}`); d.dismiss(); });
  const img = '<img src=x onerror="window.__xss=1;alert(1)">';
  const script = '<script>window.__xss=2;alert(2)</script>';
  const events = [
    { ph: 'M', name: 'process_name', pid: 1, tid: 0, args: { name: `proc ${img}` } },
    { ph: 'M', name: 'thread_name', pid: 1, tid: 7, args: { name: `thread ${script}` } },
    { ph: 'X', cat: 'cpu_op', name: img, pid: 1, tid: 7, ts: 10, dur: 50, args: { 'Input Dims': [[2, 2]], note: script } },
    { ph: 'X', cat: 'cpu_op', name: script, pid: 1, tid: 7, ts: 20, dur: 10 },
  ];
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ks-')), 'xss.json');
  fs.writeFileSync(file, JSON.stringify({ traceEvents: events }));
  await app.open();
  await app.upload(file);
  await app.waitForTimeline();
  await expect(page.getByTestId('group-label').first()).toHaveText(`▾ proc ${img}`);
  await expect(page.getByTestId('lane-label').first()).toHaveText(`thread ${script}`);
  await app.searchInput.fill('onerror');
  await app.idle();
  await app.searchInput.press('Enter');
  await app.idle();
  await expect(page.getByTestId('detail-name')).toHaveText(img);
  await expect(page.locator('[data-testid="detail-arg"][data-key="note"] td')).toHaveText(JSON.stringify(script));
  await app.openTab('ops');
  await expect(page.getByTestId('op-row').locator('td[data-key="name"]').filter({ hasText: '<script>' })).toHaveCount(1);
  expect(await page.evaluate(() => document.querySelectorAll('img, script:not([src])').length)).toBe(0);
  expect(await page.evaluate(() => window.__xss)).toBeUndefined();
  await app.screenshot('share-markup-as-text');
  expect(violations).toEqual([]);
});
