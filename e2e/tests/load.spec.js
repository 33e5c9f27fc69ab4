// Journey: open Kinetoscope, load a trace (demo by default, file picker, drop, ?url=), read its
// summary; bad input shows an error and the next file still loads. The page must show the same
// numbers as `kinetoscope info --json` on the same file. Screenshots: e2e/test-results/*.png.
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { test, expect } = require('../pages/app');
const {
  DEMO_TRACE, realFixture, cliInfo, protocolVersion, expectSameSummary, numbersIn,
} = require('../support/fixtures');

/** Checks the summary panel shows `summary`'s file name and event count. */
async function expectSummaryShown(app, summary) {
  await expect(app.glance).toBeVisible();
  await app.openParseStats();
  await expect(app.summary).toBeVisible();
  await expect(app.summaryFile).toContainText(summary.file_name);
  // textContent, not innerText: the summary cards use content-visibility, and innerText of a
  // card not laid out yet (below the fold) is empty.
  const shown = numbersIn(await app.summaryEvents.textContent());
  expect(shown, `summary-events shows ${summary.events}`).toContain(summary.events);
  await expect(app.error).toHaveCount(0);
}

test('the demo trace loads by default and its summary appears', async ({ app }) => {
  // A plain static host: the page names no listing, so it asks for none (no 404 logged).
  const asked = [];
  app.page.on('request', (r) => asked.push(new URL(r.url()).pathname));
  await app.open();
  const s = await app.state();
  expect(s.status).toBe('ready');
  expect(s.error).toBeNull();
  expect(s.protocolVersion).toBe(protocolVersion());
  expect(s.summary.file_name).toContain('demo');
  expect(s.summary.events).toBeGreaterThan(0);
  // The demo says so, and how to open one's own trace, on the first screen.
  const banner = app.page.getByTestId('demo-banner');
  await expect(banner).toBeInViewport();
  await expect(banner).toContainText('Open trace');
  await expectSummaryShown(app, s.summary);
  for (const part of [app.summarySpan, app.phaseCounts, app.categoryCounts, app.laneList]) {
    await expect(part).toBeVisible();
  }
  await expect(app.phaseCounts).toContainText('X');
  await app.screenshot('demo');
  expect(asked.filter((p) => p.endsWith('/index.json')), 'index.json asked for').toEqual([]);
  await app.upload(realFixture('catapult__async_begin_end.json'));
  await expect(banner).toHaveCount(0);
  // The committed demo file is what the page loaded.
  expectSameSummary(s.summary, cliInfo(DEMO_TRACE));
});

// One `.json.gz` object form, bare arrays (plain and gzip), and a large file (53 MB of JSON).
const FIXTURES = [
  { id: 'gzip', file: 'hta__benchmark_result_493459_1694039959_trace.json.gz' },
  { id: 'bare-array', file: 'catapult__async_begin_end.json' },
  { id: 'bare-array-gzip', file: 'kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz' },
  { id: 'large', file: 'hta__df_index_resolver.json.gz' },
];

test.describe('a real trace shows what `kinetoscope info --json` prints', () => {
  const expected = {};
  test.beforeAll(() => {
    for (const { file } of FIXTURES) expected[file] = cliInfo(realFixture(file));
  });

  for (const { id, file } of FIXTURES) {
    test(`${id}: ${file}`, async ({ app }) => {
      test.setTimeout(120_000);
      await app.open();
      const s = await app.upload(realFixture(file));
      expect(s.error).toBeNull();
      expect(s.status).toBe('ready');
      expect(s.summary.file_name).toBe(file);
      expect(s.summary.file_bytes).toBe(fs.statSync(realFixture(file)).size);
      expectSameSummary(s.summary, expected[file]);
      await expectSummaryShown(app, s.summary);
      await app.screenshot(`fixture-${id}`);
    });
  }
});

// A PNG signature and IHDR chunk start, then junk: binary, not gzip, not JSON.
const PNG_BYTES = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]),
  Buffer.alloc(64, 0xab),
]);
const BAD_INPUTS = [
  { step: 'error-text', kind: 'malformed', file: { name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('hello world\n') } },
  { step: 'error-png', kind: 'malformed', file: { name: 'picture.png', mimeType: 'image/png', buffer: PNG_BYTES } },
  { step: 'error-empty', kind: 'empty', file: { name: 'empty.json', mimeType: 'application/json', buffer: Buffer.alloc(0) } },
];

test('bad input shows an error and the next file still loads', async ({ app }) => {
  await app.open();
  for (const { step, kind, file } of BAD_INPUTS) {
    await test.step(step, async () => {
      const s = await app.upload(file);
      expect(s.status).toBe('error');
      expect(s.error, 'window.kinetoscope.error').not.toBeNull();
      expect(s.error.kind).toBe(kind);
      expect(s.error.message).toBeTruthy();
      await expect(app.error).toBeVisible();
      await expect(app.error).toContainText(s.error.message);
      await app.screenshot(step);
    });
  }
  await test.step('error-recovered', async () => {
    const file = realFixture('catapult__async_begin_end.json');
    const s = await app.upload(file);
    expect(s.status).toBe('ready');
    expect(s.error).toBeNull();
    expectSameSummary(s.summary, cliInfo(file));
    await expectSummaryShown(app, s.summary);
    await app.screenshot('error-recovered');
  });
});

test('a file dropped on the page loads', async ({ app }) => {
  await app.open();
  const file = realFixture('catapult__async_begin_end.json');
  const s = await app.drop({ name: path.basename(file), buffer: fs.readFileSync(file) });
  expect(s.status).toBe('ready');
  expect(s.summary.file_name).toBe(path.basename(file));
  expectSameSummary(s.summary, cliInfo(file));
  await expectSummaryShown(app, s.summary);
  await app.screenshot('dropped');
});

test('?url= loads that trace instead of the demo', async ({ app, page }) => {
  const file = realFixture('hta__benchmark_result_493459_1694039959_trace.json.gz');
  // Served by the test, not the network: the page only sees a same-origin URL.
  await page.route('**/remote/trace.json.gz', (route) =>
    route.fulfill({ status: 200, contentType: 'application/gzip', body: fs.readFileSync(file) }));
  await app.open(`?url=${encodeURIComponent('/remote/trace.json.gz')}`);
  const s = await app.state();
  expect(s.status).toBe('ready');
  expect(s.loads).toBe(1);
  expect(s.summary.file_name).toContain('trace.json.gz');
  expectSameSummary(s.summary, cliInfo(file));
  await expectSummaryShown(app, s.summary);
  await app.screenshot('url-param');
});

test('Cancel stops a URL still arriving: the download ends, the page says so, the next file loads', async ({ app, page }) => {
  // A trace that never finishes arriving: 256 KiB every 50 ms (5 MiB/s) per request of a
  // declared 512 MiB, from another origin that allows it (CORS). The worker fetches it; Cancel
  // must close the download. The page may start more than one request (the first can close at
  // once), so each is tracked: all must be closed, and the bound is on the bytes sent after the
  // click (the whole declared size can never be sent within the test's timeout).
  let sent = 0;
  const responses = [];
  const server = http.createServer((req, res) => {
    const r = { closedAt: null };
    responses.push(r);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(512 << 20), 'access-control-allow-origin': '*' });
    res.write('{"traceEvents":[\n');
    const piece = Buffer.from(`{"ph":"X","name":"op","pid":1,"tid":1,"ts":1,"dur":1},\n`.repeat(4096)).subarray(0, 256 << 10);
    const timer = setInterval(() => { sent += piece.length; res.write(piece); }, 50);
    res.on('close', () => { clearInterval(timer); r.closedAt = sent; });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${server.address().port}/slow.pt.trace.json`;
    await page.goto(`/?url=${encodeURIComponent(url)}`);
    await expect(app.page.getByTestId('progress')).toBeVisible();
    await expect.poll(() => sent, { message: 'bytes streamed before Cancel' }).toBeGreaterThan(2 << 20);
    const atClick = sent;
    expect(responses.some((r) => r.closedAt === null), 'a download is open at the click').toBe(true);
    await app.page.getByTestId('cancel-load').click();
    // Every download closed within 10 s (at most 50 MiB more per request at the server's pace),
    // and in fact within 32 MiB.
    await expect.poll(() => responses.filter((r) => r.closedAt === null).length,
      { message: 'downloads still open after Cancel', timeout: 10_000 }).toBe(0);
    const atClose = Math.max(...responses.map((r) => r.closedAt));
    expect(atClose - atClick, 'bytes sent after Cancel').toBeLessThanOrEqual(32 << 20);
    await app.waitForLoads(1);
    const s = await app.state();
    expect(s.status).toBe('error');
    expect(s.error.kind).toBe('cancelled');
    await expect(app.error).toBeVisible();
    await app.screenshot('cancelled');
    await app.expectNextFileLoads();
  } finally {
    server.closeAllConnections(); // a download Cancel left open would keep close() waiting
    await new Promise((resolve) => server.close(resolve));
  }
});
