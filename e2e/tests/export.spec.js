// Journey: "export a report". Open the demo trace by URL and press Export report: the worker
// builds the HTML and the page downloads it as one file named after the trace. Opened in a
// fresh context with the network off, the file requests nothing, shows its charts, and its
// tables and findings hold `report --json`'s numbers; its links lead back to this trace in the
// viewer, and followed there, a finding's, an evidence slice's and a step's restore that view. Screenshot: e2e/test-results/export-report.png (and the file, export-report.html).
const fs = require('node:fs');
const path = require('node:path');
const { test, expect } = require('../pages/app');
const { DEMO_TRACE, RESULTS_DIR, cliReport } = require('../support/fixtures');

/** Rows of table `id` as { name, us: [data-us values] } (header rows have no cells). */
async function rows(page, id) {
  return page.locator(`#${id} tr:has(td)`).evaluateAll((trs) => trs.map((tr) => ({
    name: tr.querySelector('td[data-name]')?.dataset.name ?? tr.querySelector('td').textContent,
    us: [...tr.querySelectorAll('td[data-us]')].map((td) => Number(td.dataset.us)),
  })));
}

test('Export report downloads one HTML file that opens offline with the CLI numbers', async ({ app, browser }) => {
  const json = cliReport(DEMO_TRACE);
  await app.open('?url=public/demo.pt.trace.json.gz');
  const viewer = app.page.url().split('#')[0];
  const [download] = await Promise.all([
    app.page.waitForEvent('download'),
    app.page.getByTestId('export-report').click(),
  ]);
  expect(download.suggestedFilename()).toBe('demo.pt.trace.report.html');
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, 'export-report.html');
  await download.saveAs(file);
  // Built in the worker; its main-thread long tasks are a benchmark's (journeys-bench.spec.js).

  // A fresh context, offline, every request aborted and recorded.
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  await context.setOffline(true);
  const requests = [];
  await context.route('**/*', (route) => {
    requests.push(route.request().url());
    return route.abort();
  });
  const page = await context.newPage();
  page.on('request', (r) => requests.push(r.url()));
  await page.setContent(fs.readFileSync(file, 'utf8'), { waitUntil: 'load' });

  await expect(page.locator('#trace-name')).toHaveText('demo.pt.trace.json.gz');
  for (const id of ['chart-steps', 'chart-gpu', 'chart-memory']) {
    await expect(page.locator(`#${id} svg.chart`)).toBeVisible();
  }
  const ops = await rows(page, 'ops-table');
  expect(ops.map((r) => r.name)).toEqual(json.ops.slice(0, 20).map((o) => o.name));
  expect(ops.map((r) => r.us)).toEqual(json.ops.slice(0, 20).map((o) => [o.self_cpu_us, o.cpu_total_us, o.self_device_us, o.device_total_us]));
  const kernels = await rows(page, 'kernels-table');
  expect(kernels.map((r) => [r.name, r.us[0]])).toEqual(json.kernels.slice(0, 20).map((k) => [k.name, k.total_us]));
  const steps = await rows(page, 'steps-table');
  expect(steps.map((r) => [r.name, r.us[2]])).toEqual(json.steps.map((s) => [s.name + (s.incomplete ? ' (incomplete)' : ''), s.dur_us]));
  const rules = await page.locator('#findings article').evaluateAll((as) => as.map((a) => a.dataset.rule));
  expect(rules).toEqual(json.findings.map((f) => f.rule));
  const hrefs = await page.locator('a[href]').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  expect(hrefs.length).toBeGreaterThan(json.findings.length);
  for (const href of hrefs) expect(href.startsWith(viewer)).toBe(true);
  await page.screenshot({ path: path.join(RESULTS_DIR, 'export-report.png'), fullPage: true });
  expect(requests).toEqual([]);
  await context.close();

  // Followed in the viewer, one link of each kind restores its view: the report writes its
  // links with its own encoder (worker/src/report/html.rs), the page parses them with another.
  const kinds = { finding: (h) => h.has('finding'), slice: (h) => h.has('sel'), step: (h) => h.get('scope')?.startsWith('step:') };
  const fragment = (href) => new URLSearchParams(href.split('#')[1] || '');
  for (const [kind, is] of Object.entries(kinds)) {
    const href = hrefs.find((h) => is(fragment(h)));
    expect(href, `a ${kind} link in the report`).toBeTruthy();
    const want = fragment(href);
    await app.page.goto('about:blank');
    await app.page.goto(href);
    await app.waitForLoads(1);
    const restored = fragment(await app.page.evaluate(() => window.kinetoscope.link));
    for (const key of ['tab', 'finding', 'scope', 'sel']) {
      if (want.has(key)) expect(restored.get(key), `${kind} link: ${key} restored (${href})`).toBe(want.get(key));
    }
    if (kind === 'finding') {
      expect(await app.page.evaluate(() => window.kinetoscope.findings.active)).toBe(want.get('finding'));
    } else if (kind === 'slice') {
      const [lane, startNs, , name] = want.get('sel').split(',');
      const sel = (await app.timeline()).selection;
      expect([sel.lane, sel.startNs, sel.name], 'the evidence slice is selected').toEqual([Number(lane), Number(startNs), name]);
      // Its window: as wide as the link's, holding the slice (the page keeps a window that
      // starts before the trace inside the trace's extent, so it may be shifted).
      const [a, b] = want.get('t').split(',').map(Number);
      const t = await app.timeline();
      expect(Math.abs(t.endNs - t.startNs - (b - a)), `window ${t.startNs}..${t.endNs} for ${a}..${b}`).toBeLessThan(1);
      expect(t.startNs <= sel.startNs && sel.startNs + sel.durNs <= t.endNs, 'the slice in view').toBe(true);
    } else {
      expect(await app.page.evaluate(() => window.kinetoscope.table && window.kinetoscope.table.scope)).toBe('step');
    }
  }
});
