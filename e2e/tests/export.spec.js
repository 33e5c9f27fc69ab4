// Journey: "export a report". Open the demo trace by URL and press Export report: the worker
// builds the HTML and the page downloads it as one file named after the trace. Opened in a
// fresh context with the network off, the file requests nothing, shows its charts, and its
// tables and findings hold `report --json`'s numbers; its links lead back to this trace in the
// viewer. Screenshot: e2e/test-results/export-report.png (and the file, export-report.html).
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
});
