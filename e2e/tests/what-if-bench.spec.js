// Benchmark (not a test): a what-if answer's latency in the page on a large trace with steps.
// Loads KINETOSCOPE_BENCH_WHATIF (a file path, e.g. `kinetoscope-synth inflate --target-mb 100` of a
// real fixture with steps, into target/bench-data/, never committed), opens the Steps tab and
// adds what-if edits one by one, printing one JSON line per edit with the ms from sending the
// query to its answer in the page (`critical.whatIf.latencyMs`): the first builds the step
// graphs the worker then keeps, the next ones only re-run the forward pass. Then the main
// thread's long tasks (over 50 ms) while the Steps tab drew its bound-by bars and the timeline
// outlined every step's path in view and then the first step's. Skipped unless the variable is
// set.
const { test } = require('../pages/app');

const file = process.env.KINETOSCOPE_BENCH_WHATIF;

test('what-if latency on a large trace', async ({ app, page }) => {
  test.skip(!file, 'KINETOSCOPE_BENCH_WHATIF is not set');
  test.setTimeout(300_000);
  await app.open();
  await app.upload(file);
  await app.waitForTimeline();
  const before = await page.evaluate(() => window.kinetoscope.longTasks.count);
  const phases = {};
  const mark = async (name) => {
    const { list } = await page.evaluate(() => window.kinetoscope.longTasks);
    phases[name] = list.slice(Object.values(phases).reduce((n, l) => n + l.length, before));
  };
  await app.openTab('steps');
  await app.idle();
  await mark('steps_tab');
  const steps = await page.evaluate(() => window.kinetoscope.critical.steps.length);
  for (const edit of ['gemm*0.5', 'launch=0', 'python*0.5', 'sync=0']) {
    await page.getByTestId('what-if-input').fill(edit);
    await page.getByTestId('what-if-add').click();
    await app.idle();
    const w = await page.evaluate(() => JSON.parse(JSON.stringify(window.kinetoscope.critical.whatIf)));
    console.log(JSON.stringify({ bench: 'what-if', file, steps, edits: w.edits, latencyMs: w.latencyMs, error: w.error || w.editError }));
  }
  await mark('what_if');
  await page.getByTestId('critical-toggle').click();
  await app.idle();
  await mark('toggle_all_steps');
  const all = await page.evaluate(() => window.kinetoscope.critical.segments);
  await page.getByTestId('bound-by-row').first().click();
  await app.idle();
  await mark('pick_first_step');
  const one = await page.evaluate(() => window.kinetoscope.critical.segments);
  const list = Object.values(phases).flat();
  console.log(JSON.stringify({
    bench: 'critical-path-page', file, steps, segments_all_in_view: all, segments_first_step: one,
    long_tasks: list.length, max_ms: Math.max(0, ...list.map(([, ms]) => ms)),
    per_phase: Object.fromEntries(Object.entries(phases).map(([k, l]) => [k, l.map(([, ms]) => ms)])),
  }));
});
