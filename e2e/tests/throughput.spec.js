// The Steps tab's throughput setting: a batch size and tokens per step typed in add Samples/s and
// Tokens/s to the Steps table, each step's equal to `report --batch-size --tokens-per-step
// --json`'s throughput.steps[], and the run's rates in the line beside the inputs; the share link
// carries `bs=` / `tps=`, so a fresh browser context opens the same columns.
const path = require('node:path');
const { test, expect, fresh } = require('../pages/app');
const { realFixture, cliReport } = require('../support/fixtures');
const { serve } = require('../support/servers');

const DIST = path.resolve(__dirname, '..', process.env.E2E_DIST || '../dist');
const RESNET = 'kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz';

/** The Steps table's rates, per row. */
async function shownRates(app) {
  const rows = await app.rows('step-row');
  return rows.map((r) => ({ samples: r.samples_per_s, tokens: r.tokens_per_s }));
}

test('batch size and tokens per step give the report\'s samples/s and tokens/s, and the link keeps them', async ({ app, page, browser }) => {
  const file = realFixture(RESNET);
  const want = cliReport(file, '--batch-size', '32', '--tokens-per-step', '8192').throughput;
  expect(want.complete_steps).toBe(6);
  const wantRows = want.steps.map((s) => ({ samples: s.samples_per_s, tokens: s.tokens_per_s }));
  const site = await serve({ '/k/': DIST, '/traces/resnet.json.gz': file });
  try {
    await page.goto(`${site.origin}/k/?url=../traces/resnet.json.gz`);
    await app.waitForLoads(1);
    await app.openTab('steps');
    await expect(page.getByTestId('col-samples_per_s')).toHaveCount(0);
    await expect(page.getByTestId('throughput-summary')).toHaveCount(0);

    await page.getByTestId('batch-size').fill('32');
    await page.getByTestId('batch-size').dispatchEvent('change');
    await expect(page.getByTestId('col-samples_per_s')).toBeVisible();
    await expect(page.getByTestId('col-tokens_per_s')).toHaveCount(0);
    await page.getByTestId('tokens-per-step').fill('8192');
    await page.getByTestId('tokens-per-step').dispatchEvent('change');
    await expect(page.getByTestId('col-tokens_per_s')).toBeVisible();
    await app.idle();

    const rates = await shownRates(app);
    expect(rates.length).toBe(wantRows.length);
    rates.forEach((r, i) => {
      expect(r.samples).toBeCloseTo(wantRows[i].samples, 6);
      expect(r.tokens).toBeCloseTo(wantRows[i].tokens, 3);
    });
    const summary = page.getByTestId('throughput-summary');
    await expect(summary).toHaveText(/^over 6 complete steps: [\d,.]+ samples\/s, [\d,.]+ tokens\/s$/);
    expect(Number(await summary.getAttribute('data-samples-per-s'))).toBeCloseTo(want.samples_per_s, 6);
    expect(Number(await summary.getAttribute('data-tokens-per-s'))).toBeCloseTo(want.tokens_per_s, 3);
    await app.screenshot('throughput');

    await page.waitForFunction(() => /[#&]bs=32(&|$)/.test(window.kinetoscope.link) && /[#&]tps=8192(&|$)/.test(window.kinetoscope.link));
    const link = await page.evaluate(() => window.kinetoscope.link);
    const { app: other, close } = await fresh(browser, link);
    try {
      await expect(other.page.getByTestId('batch-size')).toHaveValue('32');
      await expect(other.page.getByTestId('tokens-per-step')).toHaveValue('8192');
      expect(await shownRates(other)).toEqual(rates);
    } finally {
      await close();
    }

    // Cleared: the columns go.
    await page.getByTestId('batch-size').fill('');
    await page.getByTestId('batch-size').dispatchEvent('change');
    await page.getByTestId('tokens-per-step').fill('');
    await page.getByTestId('tokens-per-step').dispatchEvent('change');
    await expect(page.getByTestId('col-samples_per_s')).toHaveCount(0);
    await expect(page.getByTestId('throughput-summary')).toHaveCount(0);
  } finally {
    await site.close();
  }
});
