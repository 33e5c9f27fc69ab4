// Journey: a dashboard or notebook opens Kinetoscope with a trace it holds, by Perfetto's
// postMessage convention (docs/viewer.md#opening-a-trace-from-another-page): it opens the page,
// posts 'PING' until the page answers 'PONG', then posts {perfetto: {buffer, title}} (or the same
// under `kinetoscope`). The trace loads as the same file picked would: the summary equals the
// CLI's. A large posted trace is parsed in parts (the first by the load worker, the others by
// parse workers, each sent its range) and gives exactly the single-worker parse; a post without
// bytes says what was wrong.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { AppPage, test, expect } = require('../pages/app');
const { realFixture, cliInfo, expectSameSummary } = require('../support/fixtures');
const { writeBigTrace } = require('../support/big-trace');

const POLL = { polling: 100, timeout: 120_000 };

/** Posts the file at `file` (on disk: too large to route) to the page itself under `key`, named
 * `name`: read in the page from a file input of the test's own, as a notebook holds its bytes. */
async function postFileToSelf(page, file, key, name) {
  await page.evaluate(() => {
    const input = document.createElement('input');
    input.type = 'file';
    input.id = 'posted-source';
    input.hidden = true;
    document.body.append(input);
  });
  await page.setInputFiles('#posted-source', file);
  await page.evaluate(async ({ key, name }) => {
    const input = document.getElementById('posted-source');
    const buffer = await input.files[0].arrayBuffer();
    input.remove();
    window.postMessage({ [key]: { buffer, fileName: name } }, '*', [buffer]);
  }, { key, name });
}

/** Waits until the page has loaded the trace named `name`; its `window.kinetoscope` snapshot. */
async function loadedAs(page, name) {
  await page.waitForFunction((name) => {
    const k = window.kinetoscope;
    return k && k.status !== 'loading' && (k.error || (k.summary && k.summary.file_name === name));
  }, name, POLL);
  return new AppPage(page).state();
}

test('a trace posted by the page that opened Kinetoscope loads, after the PING / PONG handshake', async ({ page }) => {
  const fixture = realFixture('hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz');
  await page.context().route('**/dashboard.html', (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>dashboard</title>' }));
  await page.context().route('**/dashboard/trace.json.gz', (route) => route.fulfill({ body: fs.readFileSync(fixture) }));
  await page.goto('/dashboard.html');
  const popup = page.waitForEvent('popup');
  // What a dashboard does (Perfetto's documented snippet, in substance).
  const pongs = await page.evaluate(async () => {
    const buffer = await (await fetch('/dashboard/trace.json.gz')).arrayBuffer();
    const ui = window.open('/');
    let pongs = 0;
    await new Promise((answered) => {
      const timer = setInterval(() => ui.postMessage('PING', '*'), 50);
      window.addEventListener('message', (e) => {
        if (e.source !== ui || e.data !== 'PONG') return;
        pongs++;
        clearInterval(timer);
        answered();
      });
    });
    ui.postMessage({ perfetto: { buffer, title: 'minitoy from the dashboard' } }, '*', [buffer]);
    return pongs;
  });
  expect(pongs).toBeGreaterThanOrEqual(1);
  const ui = await popup;
  const errors = [];
  ui.on('pageerror', (e) => errors.push(String(e)));
  const state = await loadedAs(ui, 'minitoy from the dashboard');
  expect(state.error).toBeNull();
  expectSameSummary(state.summary, cliInfo(fixture));
  await new AppPage(ui).screenshot('posted-by-opener');
  expect(errors).toEqual([]);
});

test('a large posted trace is parsed in two parts (the load worker and a parse worker fed its range in pieces, each refilled as it is given back) and equals the single-worker parse', async ({ app, page }) => {
  test.setTimeout(180_000);
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-posted-${process.pid}.json`);
  // The parse worker's half is some 6 pieces of 16 MiB, 4 sent ahead: spent ones are refilled.
  writeBigTrace(file, 200e6);
  try {
    const strip = ({ parse_ms, parse_workers, read_wait_ms, finish_ms, ...rest }) => rest;
    await app.open('?workers=1', 1);
    await postFileToSelf(page, file, 'kinetoscope', 'big-one.json');
    const one = await loadedAs(page, 'big-one.json');
    expect(one.error).toBeNull();
    expect(one.summary.parse_workers).toBe(1);

    await app.open('?workers=2', 1);
    await postFileToSelf(page, file, 'kinetoscope', 'big-two.json');
    const two = await loadedAs(page, 'big-two.json');
    expect(two.error).toBeNull();
    expect(two.summary.parse_workers).toBe(2);
    // Bytes in memory, copied for the parse worker a piece at a time: it waited only between pieces.
    expect(two.summary.read_wait_ms).toBeGreaterThanOrEqual(0);
    expect(two.summary.read_wait_ms).toBeLessThan(two.summary.parse_ms);
    expect({ ...strip(two.summary), file_name: '' }).toEqual({ ...strip(one.summary), file_name: '' });
    expectSameSummary(two.summary, cliInfo(file));
    await app.screenshot('posted-in-parts');
  } finally {
    fs.rmSync(file, { force: true });
  }
});

test('a post without its bytes is refused with a sentence, and the page stays usable', async ({ app, page }) => {
  await app.open('', 1);
  await page.evaluate(() => window.postMessage({ kinetoscope: { title: 'no bytes' } }, '*'));
  const refused = await loadedAs(page, 'no bytes');
  expect(refused.error.kind).toBe('io');
  expect(refused.error.message).toContain('must carry its bytes as `buffer`');
  await expect(app.error).toContainText('must carry its bytes');
  const fixture = realFixture('hta__triton_example.json.gz');
  const loaded = await app.upload(fixture);
  expect(loaded.error).toBeNull();
  expectSameSummary(loaded.summary, cliInfo(fixture));
});
