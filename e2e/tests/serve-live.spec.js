// Journey: a job writes its trace into the log directory while `kinetoscope serve` runs and the
// gallery is open. The new trace appears without a reload (the page reads the listing again
// every few seconds), marked "writing"; opened while half of its gzip is on disk, it loads as a
// partial trace and the page says where reading stopped, with the same events as
// `kinetoscope info` of those bytes. Once the job finishes, the mark goes.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, expect } = require('../pages/app');
const { realFixture, cliInfo } = require('../support/fixtures');
const { startServe } = require('../support/servers');

const TRACE = 'hta__trace_filter__sampled_rank-0.json.gz';

/** The gallery's rows: [{ name, writing }] in display order. */
async function rows(page) {
  return page.getByTestId('gallery-trace').evaluateAll((trs) => trs.map((t) => ({
    name: t.querySelector('[data-testid="open-trace"]').textContent,
    writing: t.querySelector('[data-testid="trace-writing"]') !== null,
  })));
}

test('kinetoscope serve LOGDIR: a trace being written appears live and opens as what is complete', async ({ app, page }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kinetoscope-live-'));
  fs.mkdirSync(path.join(dir, 'done'));
  fs.copyFileSync(realFixture(TRACE), path.join(dir, 'done', 'rank-1.json.gz'));
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(path.join(dir, 'done', 'rank-1.json.gz'), old, old);
  const server = await startServe(dir);
  try {
    await page.goto(server.url);
    await expect(page.getByTestId('gallery')).toBeVisible();
    expect(await rows(page)).toEqual([{ name: 'rank-1.json.gz', writing: false }]);

    // The job starts: half of its gzip is on disk. No reload: the gallery polls.
    const whole = fs.readFileSync(realFixture(TRACE));
    const half = whole.subarray(0, Math.floor(whole.length / 2));
    fs.mkdirSync(path.join(dir, 'job'));
    const live = path.join(dir, 'job', 'rank-0.json.gz');
    fs.writeFileSync(live, half);
    await expect.poll(() => rows(page), { timeout: 15_000 })
      .toContainEqual({ name: 'rank-0.json.gz', writing: true });
    expect(await page.evaluate(() => window.kinetoscope.loads)).toBe(0);
    await app.screenshot('serve-live-writing');

    // Opened now: the complete events so far, and the page says where reading stopped.
    const cut = path.join(os.tmpdir(), `kinetoscope-live-half-${process.pid}.json.gz`);
    fs.writeFileSync(cut, half);
    const info = cliInfo(cut);
    fs.rmSync(cut);
    expect(info.truncated).toBe(true);
    expect(info.events).toBeGreaterThan(0);
    await page.locator('[data-testid="gallery-run"][data-name="job"]').getByTestId('open-trace').click();
    await app.waitForLoads(1);
    const s = await app.state();
    expect(s.status).toBe('ready');
    expect(s.summary.truncated).toBe(true);
    expect(s.summary.events).toBe(info.events);
    const banner = page.getByTestId('truncation-banner');
    await expect(banner).toBeVisible();
    await expect(banner).toContainText(`The ${info.events.toLocaleString('en-US')} complete events before it are loaded`);
    await app.screenshot('serve-live-partial');

    // The job finishes: back in the gallery, the mark goes once the file is whole and quiet.
    fs.writeFileSync(live, whole);
    fs.utimesSync(live, old, old);
    await page.goBack();
    await expect(page.getByTestId('gallery')).toBeVisible();
    await expect.poll(() => rows(page), { timeout: 15_000 })
      .toContainEqual({ name: 'rank-0.json.gz', writing: false });
  } finally {
    server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
