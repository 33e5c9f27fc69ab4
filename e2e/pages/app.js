// Page object for Kinetoscope's single screen. Locators by data-testid; state through the
// read-only `window.kinetoscope` ({ status, summary, error, loads, protocolVersion, table, timeline,
// longTasks, idle() }).
// Waits are on `loads` and `idle()`, never on sleeps.
const path = require('node:path');
const { test: base, expect } = require('@playwright/test');
const { RESULTS_DIR, realFixture, cliInfo, expectSameSummary } = require('../support/fixtures');

// Waits poll `window.kinetoscope` every 50 ms, not in every animation frame (Playwright's
// default): a read after a state change rebuilds its snapshot, and read in every frame that
// work landed in the frames the benchmarks measure, work a visitor's page never does.
const POLL = { polling: 50 };

class AppPage {
  /** @param {import('@playwright/test').Page} page */
  constructor(page) {
    this.page = page;
    this.dropZone = page.getByTestId('drop-zone');
    this.fileInput = page.getByTestId('file-input');
    this.progress = page.getByTestId('progress');
    this.error = page.getByTestId('error');
    this.summary = page.getByTestId('summary');
    this.glance = page.getByTestId('glance');
    this.parseStats = page.getByTestId('parse-stats');
    this.summaryFile = page.getByTestId('summary-file');
    this.summaryEvents = page.getByTestId('summary-events');
    this.summarySpan = page.getByTestId('summary-span');
    this.phaseCounts = page.getByTestId('phase-counts');
    this.categoryCounts = page.getByTestId('category-counts');
    this.laneList = page.getByTestId('lane-list');
    this.tableFilter = page.getByTestId('table-filter');
    this.byShapeToggle = page.getByTestId('by-shape-toggle');
    this.timelineRegion = page.getByTestId('timeline');
    this.canvas = page.getByTestId('timeline-canvas');
    this.laneLabels = page.getByTestId('lane-labels');
    this.details = page.getByTestId('details-panel');
    this.searchInput = page.getByTestId('search-input');
    this.searchCount = page.getByTestId('search-count');
    /** Uncaught exceptions in the page; tests expect none. */
    this.pageErrors = [];
    page.on('pageerror', (err) => this.pageErrors.push(String(err)));
  }

  /** Opens the page (with an optional query such as `?url=…`) and waits for `loads` loads. */
  async open(query = '', loads = 1) {
    await this.page.goto(`/${query}`);
    await this.waitForLoads(loads);
  }

  /** Waits until `window.kinetoscope` is defined (the page is built), without reading it. */
  async waitForHook() {
    await this.page.waitForFunction(() => 'kinetoscope' in window, null, POLL);
  }

  /** Waits until `window.kinetoscope.loads >= n`, then until the app is idle. */
  async waitForLoads(n) {
    await this.page.waitForFunction((want) => window.kinetoscope && window.kinetoscope.loads >= want, n, POLL);
    await this.page.evaluate(() => window.kinetoscope.idle());
  }

  /** A snapshot of `window.kinetoscope`'s data fields. */
  async state() {
    return this.page.evaluate(() => {
      const k = window.kinetoscope;
      return { status: k.status, summary: k.summary, error: k.error, loads: k.loads, protocolVersion: k.protocolVersion };
    });
  }

  /** Picks a file (path or `{ name, mimeType, buffer }`) with the file input; returns the state after it loaded. */
  async upload(file) {
    const before = await this.page.evaluate(() => window.kinetoscope.loads);
    await this.fileInput.setInputFiles(file);
    await this.waitForLoads(before + 1);
    return this.state();
  }

  /** After a failed or cancelled load the page is usable: the next file (a small real trace)
   *  loads and its summary equals the CLI's. */
  async expectNextFileLoads() {
    const next = realFixture('catapult__async_begin_end.json');
    const after = await this.upload(next);
    expect(after.status).toBe('ready');
    expectSameSummary(after.summary, cliInfo(next));
  }

  /** Drops a file (`{ name, buffer }`) on the drop zone; returns the state after it loaded. */
  async drop({ name, buffer }) {
    const before = await this.page.evaluate(() => window.kinetoscope.loads);
    await this.dropZone.evaluate((el, { name: fileName, b64 }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dataTransfer = new DataTransfer();
      dataTransfer.items.add(new File([bytes], fileName));
      for (const type of ['dragenter', 'dragover', 'drop']) {
        el.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer }));
      }
    }, { name, b64: buffer.toString('base64') });
    await this.waitForLoads(before + 1);
    return this.state();
  }

  /** Shows the table's columns `keys` through its "Columns" menu (`column-toggle` checkboxes). */
  async showColumns(...keys) {
    const chooser = this.page.getByTestId('column-chooser');
    if (!(await chooser.evaluate((d) => d.open))) await chooser.locator('summary').click();
    for (const key of keys) {
      const box = chooser.locator(`[data-testid="column-toggle"][data-key="${key}"]`);
      if (!(await box.isChecked())) await box.click();
      await expect(this.page.getByTestId(`col-${key}`)).toBeVisible();
    }
    await chooser.locator('summary').click();
    await this.idle();
  }

  /** Unfolds the Summary tab's parse statistics (file, events, links, lanes). */
  async openParseStats() {
    if (!(await this.parseStats.evaluate((d) => d.open))) await this.parseStats.locator('summary').first().click();
  }

  /** Clicks tab `name` (summary, ops, kernels, steps) and waits until its table (if any) arrived. */
  async openTab(name) {
    await this.page.getByTestId(`tab-${name}`).click();
    await this.idle();
  }

  /** Types step `n` into the step picker `testId` (`table-step`, `compare-step`) and waits until idle. */
  async pickStep(testId, n) {
    const box = this.page.getByTestId(testId);
    await box.fill(String(n));
    await box.press('Enter');
    await this.idle();
  }

  /** Waits on `window.kinetoscope.idle()` (no load running, no query pending). */
  async idle() {
    await this.page.evaluate(() => window.kinetoscope.idle());
  }

  /** `window.kinetoscope.table` ({ kind, rows, sort: { key, desc }, byShape, pending } or null). */
  async table() {
    return this.page.evaluate(() => {
      const t = window.kinetoscope.table;
      return t && { kind: t.kind, scope: t.scope, rows: t.rows, sort: t.sort && { key: t.sort.key, desc: t.sort.desc }, byShape: t.byShape, pending: t.pending };
    });
  }

  /**
   * Every row of the table whose rows are `rowTestId`, in display order, as `{ key: cell }` with
   * `data-value` numbers or text (a text cell's whole text is its `title`). Tables build only the rows in view, so this scrolls the table
   * through (by `aria-rowindex`, against the table's `aria-rowcount`) and scrolls it and the page back.
   */
  async rows(rowTestId) {
    return this.page.evaluate(async (id) => {
      const sel = `[data-testid="${id}"]`;
      const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
      let any = document.querySelector(sel);
      // A table just answered may build its rows a few frames later, and one off screen is not
      // laid out (`content-visibility: auto`) and builds none: bring the table boxes into view
      // and wait up to 60 frames for a row.
      const at = [window.scrollX, window.scrollY];
      for (let i = 0; !any && i < 60; i++) {
        for (const b of document.querySelectorAll('.data-table')) b.scrollIntoView({ block: 'nearest' });
        await frame();
        any = document.querySelector(sel);
      }
      window.scrollTo(...at);
      if (!any) return [];
      const box = any.closest('.data-table');
      const total = Number(any.closest('table').getAttribute('aria-rowcount')) - 1;
      const rowH = any.getBoundingClientRect().height;
      const got = new Map();
      const read = () => {
        for (const tr of box.querySelectorAll(sel)) {
          const k = Number(tr.getAttribute('aria-rowindex')) - 2;
          if (got.has(k)) continue;
          got.set(k, Object.fromEntries([...tr.querySelectorAll('td[data-key]')].map((td) => [td.dataset.key,
            td.dataset.value !== undefined && td.dataset.value !== '' ? Number(td.dataset.value) : (td.title || td.textContent)])));
        }
      };
      // Off screen, a table is not laid out (`content-visibility: auto`) and builds no rows.
      const page = [window.scrollX, window.scrollY];
      box.scrollIntoView({ block: 'nearest' });
      const start = box.scrollTop;
      read();
      for (let top = 0; got.size < total && top < box.scrollHeight; top += box.clientHeight) {
        box.scrollTop = top;
        // The rows at both edges of the view are built once the table has seen the scroll.
        const edges = [box.scrollTop, box.scrollTop + box.clientHeight - 1]
          .map((y) => `${sel}[aria-rowindex="${2 + Math.min(total - 1, Math.floor(y / rowH))}"]`);
        for (let i = 0; i < 120 && !edges.every((e) => box.querySelector(e)); i++) await frame();
        read();
      }
      box.scrollTop = start;
      window.scrollTo(...page);
      await frame();
      return [...got.keys()].sort((a, b) => a - b).map((k) => got.get(k));
    }, rowTestId);
  }

  /**
   * The first `n` rows `rowTestId` as a person sees them, without scrolling: per row
   * `{ key: { text, value, title } }` with the cell's visible text, its `data-value` as a number
   * (null when empty or absent) and its `title` (a text cell's whole text). Waits until they are built.
   */
  async shownRows(rowTestId, n) {
    const rows = this.page.getByTestId(rowTestId);
    await expect(rows.nth(n - 1)).toBeVisible();
    return rows.evaluateAll((trs, count) => trs
      .sort((a, b) => Number(a.getAttribute('aria-rowindex')) - Number(b.getAttribute('aria-rowindex')))
      .slice(0, count)
      .map((tr) => Object.fromEntries([...tr.querySelectorAll('td[data-key]')].map((td) => [td.dataset.key, {
        text: td.textContent,
        value: td.dataset.value ? Number(td.dataset.value) : null,
        title: td.title,
      }]))), n);
  }

  /** The cells of column `key` in every row `rowTestId` ([`rows`]): `data-value` numbers, or text. */
  async column(rowTestId, key) {
    return (await this.rows(rowTestId)).map((row) => row[key]);
  }

  /** `window.kinetoscope.timeline` as plain data (null before the layout arrived). */
  async timeline() {
    return this.page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.timeline)));
  }

  /** Waits until the timeline has its layout and first tiles, then until idle. */
  async waitForTimeline() {
    await this.page.waitForFunction(() => {
      const t = window.kinetoscope.timeline;
      return t && t.frames.count > 0 && t.resolutionNs > 0;
    }, null, POLL);
    await this.idle();
  }

  /** Page coordinates of time `ns` on row `row` of lane `lane` (scrolls nothing). */
  async pointOf(lane, row, ns) {
    const t = await this.timeline();
    const box = await this.canvas.boundingBox();
    const l = t.lanes.find((x) => x.lane === lane && row >= x.first_row && row < x.first_row + x.rows);
    if (!l) throw new Error(`row ${row} of lane ${lane} is not laid out`);
    return {
      x: box.x + (ns - t.startNs) / t.nsPerPx,
      y: box.y + t.rulerH + l.y - t.scrollY + 3 + (row - l.first_row) * 18 + 9,
    };
  }

  /** Keeps the loaded trace as baseline and loads `file` with "Compare with…"; waits for the comparison. */
  async compareWith(file) {
    const before = await this.page.evaluate(() => window.kinetoscope.loads);
    await this.page.getByTestId('compare-input').setInputFiles(file);
    await this.waitForLoads(before + 1);
  }

  /** `window.kinetoscope.compare` as plain data (null while no baseline is kept). */
  async compare() {
    return this.page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.compare)));
  }

  /** `window.kinetoscope.compare.stack` (the stacked timelines) as plain data, or null. */
  async stack() {
    return this.page.evaluate(() => {
      const c = window.kinetoscope.compare;
      return c && JSON.parse(JSON.stringify(c.stack));
    });
  }

  /** Waits until both stacked panels have tiles and were painted, then until idle. */
  async waitForStack() {
    await this.page.waitForFunction(() => {
      const s = window.kinetoscope.compare && window.kinetoscope.compare.stack;
      return s && s.windowNs && s.rects.base > 0 && s.rects.cand > 0 && s.frames > 0 && !s.pending;
    }, null, POLL);
    await this.idle();
  }

  /** The finding item of `rule`, visible: the "Negligible (N)" fold is opened when it holds it. */
  async finding(rule) {
    const item = this.page.locator(`[data-testid="finding"][data-rule="${rule}"]`);
    const fold = this.page.getByTestId('findings-negligible');
    if (await fold.count() && await fold.locator(`[data-rule="${rule}"]`).count() && !(await fold.evaluate((d) => d.open))) {
      await fold.locator('summary').click();
    }
    return item;
  }

  /** Saves a full-page screenshot as e2e/test-results/NAME.png. */
  async screenshot(name) {
    await this.page.screenshot({ path: path.join(RESULTS_DIR, `${name}.png`), fullPage: true });
  }
}

/**
 * Opens `url` in a new browser context (a teammate's browser: no storage, no cache); waits for
 * `loads` loads and the timeline.
 */
async function fresh(browser, url, loads = 1) {
  const context = await browser.newContext();
  const app = new AppPage(await context.newPage());
  await app.page.goto(url);
  await app.waitForLoads(loads);
  await app.waitForTimeline();
  await app.idle();
  return { app, close: () => context.close() };
}

/** `test` with an `app` fixture: an AppPage whose page must end the test with no uncaught exception. */
const test = base.extend({
  app: async ({ page }, use) => {
    const app = new AppPage(page);
    await use(app);
    expect(app.pageErrors, 'uncaught exceptions in the page').toEqual([]);
  },
});

module.exports = { AppPage, test, expect, fresh };
