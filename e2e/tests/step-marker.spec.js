// Journey: a trace without ProfilerStep#N (vLLM decode with CUDA graph capture). The Steps tab
// offers its repeating annotations as step markers; picking the one with 23 occurrences makes
// the Steps table the CLI's `report --step-marker NAME --json` steps[], and the share link
// carries `marker=NAME`, so a fresh browser context opens the same steps.
const path = require('node:path');
const { test, expect, fresh } = require('../pages/app');
const { realFixture, cliReport } = require('../support/fixtures');
const { serve } = require('../support/servers');

const DIST = path.resolve(__dirname, '..', process.env.E2E_DIST || '../dist');
const VLLM = 'tracelens__vllm_decode_full__graph_capture_rank_0.pt.trace.json.gz';

/** The Steps table as the CLI's steps[]: name and duration (µs, to the ns). */
async function shownSteps(app) {
  const rows = await app.rows('step-row');
  return rows.map((r) => ({ name: `step ${r.step}`, dur_us: r.step_dur / 1000 }));
}

test('the step marker picker marks the steps as --step-marker does, and the link restores it', async ({ app, page, browser }) => {
  const file = realFixture(VLLM);
  const site = await serve({ '/k/': DIST, '/traces/vllm.json.gz': file });
  try {
    await page.goto(`${site.origin}/k/?url=../traces/vllm.json.gz`);
    await app.waitForLoads(1);
    await app.openTab('steps');
    await expect(page.getByTestId('steps-unavailable')).toBeVisible();
    const picker = page.getByTestId('step-marker');
    const options = await picker.locator('option').evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
    expect(options.length).toBe(2);
    const [name, label] = options[1];
    expect(label).toBe(`${name} (23×)`);

    const want = cliReport(file, '--step-marker', name).steps.map((s) => ({ name: s.name, dur_us: s.dur_us }));
    expect(want.length).toBe(23);
    await picker.selectOption(name);
    await app.waitForLoads(2);
    await expect(page.locator('.tabs button.active')).toHaveAttribute('data-testid', 'tab-steps');
    await expect(page.getByTestId('steps-unavailable')).toHaveCount(0);
    await expect(picker).toHaveValue(name);
    expect(await shownSteps(app)).toEqual(want);
    // The explanation works on the marked steps and names them as the CLI does.
    await expect(page.getByTestId('step-explain').locator('h3')).toHaveText(/^Why step \d+ took /);
    await app.screenshot('step-marker-picked');

    await page.waitForFunction(() => window.kinetoscope.link.includes('marker='));
    const link = await page.evaluate(() => window.kinetoscope.link);
    const { app: other, close } = await fresh(browser, link);
    try {
      await expect(other.page.locator('.tabs button.active')).toHaveAttribute('data-testid', 'tab-steps');
      await expect(other.page.getByTestId('step-marker')).toHaveValue(name);
      expect(await shownSteps(other)).toEqual(want);
    } finally {
      await close();
    }

    // None again: no steps.
    await picker.selectOption('');
    await app.waitForLoads(3);
    await expect(page.getByTestId('steps-unavailable')).toBeVisible();
    await page.waitForFunction(() => !window.kinetoscope.link.includes('marker='));
  } finally {
    await site.close();
  }
});
