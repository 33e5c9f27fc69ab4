// Journey: a query the worker answers with an error. The table and the charts say what failed
// (`table-error`, `chart-error`), the rest of the page still works, and the next query clears the
// message. The worker's engine has no input the page can send that fails a table query on a
// loaded trace, so the test turns one `Answer` into the `QueryFailed` the protocol allows
// (`worker/protocol`: `{"QueryFailed": {id, message}}` for the same id) on its way to the page,
// through the worker's `onmessage` setter, before the page starts.
const { test, expect } = require('../pages/app');

const MESSAGE = 'injected: the worker could not answer';

/** Arms the page to fail the next answer of kind `kind` (`table`, `counters`, ...) in the page. */
async function failNext(app, kind) {
  await app.page.evaluate((k) => { window.__failNext = k; }, kind);
}

test.beforeEach(async ({ page }) => {
  await page.addInitScript((message) => {
    const setter = Object.getOwnPropertyDescriptor(Worker.prototype, 'onmessage').set;
    Object.defineProperty(Worker.prototype, 'onmessage', {
      configurable: true,
      set(handler) {
        const wrapped = handler && ((ev) => {
          const parts = ev.data;
          const json = Array.isArray(parts) && typeof parts[0] === 'string' ? parts[0] : null;
          const kind = window.__failNext;
          if (kind && json && json.startsWith('{"Answer"')) {
            const { id, answer } = JSON.parse(json).Answer;
            if (kind in answer) {
              window.__failNext = null;
              window.__failedIds = [...(window.__failedIds || []), id];
              return handler({ data: [JSON.stringify({ QueryFailed: { id, message } })] });
            }
          }
          return handler(ev);
        });
        setter.call(this, wrapped);
      },
    });
  }, MESSAGE);
});

test('a table query answered with an error shows table-error; the next table clears it', async ({ app }) => {
  await app.open();
  await failNext(app, 'table');
  await app.openTab('kernels');
  await app.idle();
  const error = app.page.getByTestId('table-error');
  await expect(error).toBeVisible();
  await expect(error).toContainText(MESSAGE);
  expect(await app.page.evaluate(() => window.__failedIds.length)).toBe(1);
  // idle() resolved, so nothing is pending: the failure was not retried.
  // The Ops tab asks again: a table arrives and the message goes.
  await app.openTab('ops');
  await app.idle();
  await expect(app.page.getByTestId('op-table')).toBeVisible();
  await expect(app.page.getByTestId('table-error')).toHaveCount(0);
  expect(await app.page.getByTestId('op-row').count()).toBeGreaterThan(0);
  expect(app.pageErrors).toEqual([]);
});

test('a chart query answered with an error shows chart-error; the other charts still draw', async ({ app }) => {
  await app.open();
  // The charts ask for the steps table, the kernels, the counters, then the histogram: the last
  // fails, so no later answer clears its message.
  await failNext(app, 'histogram');
  await app.openTab('charts');
  await app.idle();
  const error = app.page.getByTestId('chart-error');
  await expect(error).toBeVisible();
  await expect(error).toContainText(MESSAGE);
  let c = await app.page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.charts)));
  // The failed histogram is empty and not asked again; the other charts came.
  expect(c.pending).toBe(false);
  expect(c.histogram.total).toBe(0);
  expect(c.histogram.counts).toEqual([]);
  expect(c.steps).toBe(5);
  expect(c.gpu).toBeGreaterThan(0);
  expect(await app.page.evaluate(() => window.__failedIds.length)).toBe(1);
  // Another kernel: its histogram arrives and the message goes.
  const other = await app.page.getByTestId('chart-kernel-select').locator('option').nth(1).getAttribute('value');
  await app.page.getByTestId('chart-kernel-select').selectOption(other);
  await app.idle();
  await expect(app.page.getByTestId('chart-error')).toHaveCount(0);
  c = await app.page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.charts)));
  expect(c.histogram.name).toBe(other);
  expect(c.histogram.total).toBeGreaterThan(0);
  expect(app.pageErrors).toEqual([]);
});
