// Page object for the Run tab (a distributed run: several traces, a folder or `?run=`). Locators
// by data-testid; state through `window.kinetoscope.run` ({ ranks, steps, worldSize, loaded,
// total, pending, heatmap: [{rank, step, durUs, waitUs, valueUs, outlier, x, y, w, h}],
// heatmapMode, straggler, findings, diagnostics, focus }). Waits are on `loads`, `idle()` and the run's fields, never on sleeps.
const POLL = { polling: 50 };

class RunPage {
  /** @param {import('./app').AppPage} app */
  constructor(app) {
    this.app = app;
    this.page = app.page;
    this.tab = app.page.getByTestId('tab-run');
    this.panel = app.page.getByTestId('run');
    this.progress = app.page.getByTestId('run-progress');
    this.rankTable = app.page.getByTestId('run-rank-table');
    this.heatmap = app.page.getByTestId('run-heatmap');
    this.diagnostics = app.page.getByTestId('run-diagnostics');
    this.stragglers = app.page.getByTestId('run-stragglers');
    this.offsets = app.page.getByTestId('run-offsets');
    this.findings = app.page.getByTestId('run-findings');
    this.back = app.page.getByTestId('run-back');
    this.folderInput = app.page.getByTestId('folder-input');
    this.ranksTimeline = app.page.getByTestId('run-stack-ranks');
    this.clock = app.page.getByTestId('run-stack-clock');
    this.ranksSearch = app.page.getByTestId('run-stack-search');
  }

  /** The ranks timeline's panel of `rank` and its canvas. */
  rankPanel(rank) {
    return this.page.locator(`[data-testid="run-stack-rank"][data-rank="${rank}"]`);
  }

  /**
   * Waits until the ranks timeline shows every held rank with its layout and tiles, painted,
   * then idle; returns `window.kinetoscope.run.stack`.
   */
  async waitForRanks() {
    await this.page.waitForFunction(() => {
      const s = window.kinetoscope.run && window.kinetoscope.run.stack;
      return s && !s.pending && s.held.length > 0 && s.panels.length === s.held.length
        && s.panels.every((p) => p.originNs !== null && p.rects > 0) && s.frames > 0;
    }, null, POLL);
    await this.app.idle();
    return (await this.state()).stack;
  }

  /** Switches the ranks timeline's clock (`recorded`, `collectives`, `step`); returns the stack. */
  async setClock(value) {
    await this.clock.selectOption(value);
    await this.page.waitForFunction((v) => window.kinetoscope.run.stack.clock === v, value, POLL);
    return this.waitForRanks();
  }

  /**
   * Picks `files` (paths) with the file input, or a folder with the folder input; waits for the
   * run. Returns the page time (ms) at which every file was seen in (polled every 50 ms).
   */
  async pick(files, input = this.app.fileInput) {
    const before = await this.page.evaluate(() => window.kinetoscope.loads);
    await input.setInputFiles(files);
    const handle = await this.page.waitForFunction(() => {
      const r = window.kinetoscope.run;
      return r && r.total > 0 && r.loaded === r.total && performance.now();
    }, null, POLL);
    const inAt = await handle.jsonValue();
    await this.waitForRun(before + 1);
    return inAt;
  }

  /** Drops `files` (`{ name, buffer }`) on the drop zone together; waits for the run. */
  async drop(files) {
    const before = await this.page.evaluate(() => window.kinetoscope.loads);
    await this.app.dropZone.evaluate((el, list) => {
      const dataTransfer = new DataTransfer();
      for (const { name, b64 } of list) {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        dataTransfer.items.add(new File([bytes], name));
      }
      for (const type of ['dragenter', 'dragover', 'drop']) {
        el.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer }));
      }
    }, files.map(({ name, buffer }) => ({ name, b64: buffer.toString('base64') })));
    await this.waitForRun(before + 1);
  }

  /** Opens the page at `query` (e.g. `?run=...`) and waits for the run. */
  async open(query) {
    await this.page.goto(`/${query}`);
    await this.waitForRun(1);
  }

  /** Waits for `loads >= n`, the run analysis and its drawn heatmap, then idle. */
  async waitForRun(n) {
    await this.app.waitForLoads(n);
    await this.page.waitForFunction(() => {
      const r = window.kinetoscope.run;
      return r && !r.pending && r.loaded === r.total && r.heatmap.length > 0;
    }, null, POLL);
    await this.app.idle();
  }

  /** `window.kinetoscope.run` as plain data. */
  async state() {
    return this.page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.run)));
  }

  /** Rank table rows as `{ key: data-value number | text }`, in display order. */
  async rankRows() {
    return this.page.evaluate(() => [...document.querySelectorAll('[data-testid="run-rank-row"]')].map((tr) =>
      Object.fromEntries([...tr.querySelectorAll('td[data-key]')].map((td) => [td.dataset.key,
        td.dataset.value !== undefined && td.dataset.value !== '' ? Number(td.dataset.value) : (td.title || td.textContent)]))));
  }

  /** Clicks the heatmap cell of (`rank`, `step`) and waits until that rank is loaded and idle. */
  async clickCell(rank, step) {
    const { heatmap } = await this.state();
    const cell = heatmap.find((c) => c.rank === rank && c.step === step);
    if (!cell) throw new Error(`no heatmap cell for rank ${rank} step ${step}`);
    const before = await this.page.evaluate(() => window.kinetoscope.loads);
    await this.heatmap.click({ position: { x: cell.x + cell.w / 2, y: cell.y + cell.h / 2 } });
    await this.app.waitForLoads(before + 1);
    await this.app.waitForTimeline();
    return cell;
  }
}

module.exports = { RunPage };
