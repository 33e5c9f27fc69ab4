// Journey: read the Kernels and Steps tabs of a real GPU trace (ResNet-50, Kineto, gzipped). Every
// cell of the first rows, as shown and as `data-value`, equals `kinetoscope report --json`; and,
// so the check is not the engine against itself, each kernel's calls and total time and each
// step's CPU duration are recounted here from the trace JSON.
const fs = require('node:fs');
const zlib = require('node:zlib');
const { test, expect } = require('../pages/app');
const { realFixture, cliReport, numbersIn } = require('../support/fixtures');

const RESNET = realFixture('kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz');
const FIRST_ROWS = 6;

/** The trace's events, read and gunzipped here (not by the engine). */
function traceEvents(file) {
  const text = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8');
  const json = JSON.parse(text);
  return Array.isArray(json) ? json : json.traceEvents;
}

const US_PER = { ns: 1e-3, 'µs': 1, ms: 1e3, s: 1e6 };

/** A duration as the table shows it ("10.1 µs", "1.65 ms"), in µs. */
function shownUs(text) {
  const m = /^([\d.]+) (ns|µs|ms|s)$/.exec(text);
  if (!m) throw new Error(`not a duration: ${JSON.stringify(text)}`);
  return Number(m[1]) * US_PER[m[2]];
}

/**
 * A shown cell equals `want` in the column's unit: a duration in µs (3 significant digits shown),
 * a percentage (2 decimals), a count, text (whole text in `title`, long names cut with "…"), or
 * null, shown as "—".
 */
function expectCell(cell, unit, want, what) {
  if (want === null || want === undefined) {
    expect(cell.text, what).toBe('—');
    return;
  }
  if (unit === 'us') {
    expect(Math.abs(cell.value - want * 1e3), `${what} data-value (ns)`).toBeLessThanOrEqual(Math.max(1e-6 * want * 1e3, 1e-3));
    expect(Math.abs(shownUs(cell.text) - want), `${what} shown ${cell.text}`).toBeLessThanOrEqual(Math.max(0.005 * want, 0.0005));
  } else if (unit === 'pct') {
    expect(cell.value, `${what} data-value`).toBeCloseTo(want, 6);
    expect(cell.text, what).toBe(`${want.toFixed(2)}%`);
  } else if (unit === 'count') {
    expect(cell.value, `${what} data-value`).toBeCloseTo(want, 6);
    if (Number.isInteger(want)) expect(numbersIn(cell.text), what).toEqual([want]);
    else expect(cell.text, what).toBe(want.toFixed(2));
  } else {
    expect(cell.title, what).toBe(want);
    const cut = cell.text.endsWith('…') && want.startsWith(cell.text.slice(0, -1));
    expect(cell.text === want || cut, `${what} shown ${JSON.stringify(cell.text)}`).toBe(true);
  }
}

test('kernel table: first rows equal report --json kernels[], calls and totals recounted from the trace', async ({ app }) => {
  await app.open();
  await app.upload(RESNET);
  await app.openTab('kernels');
  // Hidden by default at this width (app/src/state/columns.rs).
  await app.showColumns('median', 'p95', 'max', 'blocks_per_sm', 'occupancy', 'tensor_cores', 'precision', 'top_op');
  const expected = cliReport(RESNET).kernels;
  expect((await app.table())).toMatchObject({ kind: 'kernels', rows: expected.length, sort: { key: 'total', desc: true } });
  const shown = await app.shownRows('kernel-row', FIRST_ROWS);

  // Independent count: Kineto writes kernels as complete events of category "Kernel" (older
  // traces) or "kernel" (newer); sum their `dur` (µs) by name.
  const recount = new Map();
  for (const e of traceEvents(RESNET)) {
    if (String(e.cat).toLowerCase() !== 'kernel') continue;
    const r = recount.get(e.name) || { calls: 0, totalUs: 0 };
    r.calls += 1;
    r.totalUs += e.dur;
    recount.set(e.name, r);
  }
  expect(recount.size, 'distinct kernel names').toBe(expected.length);

  for (const [i, row] of shown.entries()) {
    const k = expected[i];
    const what = (key) => `kernel row ${i} (${k.name.slice(0, 40)}) ${key}`;
    // A C++ template name shows its distinguishing part (app/src/state/names.rs), whole in title.
    expect(row.name.title, what('name')).toBe(k.name);
    expect(k.name.includes(row.name.text.split('<')[0].replace(/…$/, '')), what('name shown')).toBe(true);
    expectCell(row.calls, 'count', k.calls, what('calls'));
    for (const [key, field] of [['total', 'total_us'], ['mean', 'mean_us'], ['median', 'median_us'], ['p95', 'p95_us'], ['max', 'max_us']]) {
      expectCell(row[key], 'us', k[field], what(key));
    }
    expectCell(row.gpu_pct, 'pct', k.gpu_time_pct, what('gpu_pct'));
    expectCell(row.blocks_per_sm, 'count', k.blocks_per_sm, what('blocks_per_sm'));
    expectCell(row.occupancy, 'pct', k.achieved_occupancy_pct, what('occupancy'));
    expectCell(row.class, 'text', k.class, what('class'));
    expectCell(row.tensor_cores, 'text', k.tensor_cores ? 'yes' : 'no', what('tensor_cores'));
    expectCell(row.precision, 'text', k.precision, what('precision'));
    expectCell(row.top_op, 'text', k.top_op && k.top_op.name, what('top_op'));

    const counted = recount.get(row.name.title);
    expect(row.calls.value, what('calls recounted')).toBe(counted.calls);
    expect(Math.abs(row.total.value - counted.totalUs * 1e3), what('total recounted (ns)')).toBeLessThanOrEqual(counted.calls * 1e-3);
  }
  await app.screenshot('tables-kernels-resnet');
});

test('step table: every step equals report --json steps[], CPU durations are the ProfilerStep events', async ({ app }) => {
  await app.open();
  await app.upload(RESNET);
  await app.openTab('steps');
  const expected = cliReport(RESNET).steps;
  expect(expected.length).toBe(6);
  expect((await app.table())).toMatchObject({ kind: 'steps', rows: expected.length });
  const shown = await app.shownRows('step-row', expected.length);

  // Independent: the ProfilerStep#N annotations' own durations, from the trace JSON.
  const stepEvents = new Map(traceEvents(RESNET)
    .filter((e) => e.ph === 'X' && /^ProfilerStep#\d+$/.test(e.name))
    .map((e) => [Number(e.name.split('#')[1]), e.dur]));

  for (const [i, row] of shown.entries()) {
    const s = expected[i];
    const n = Number(s.name.split('#')[1]);
    const what = (key) => `step ${n} ${key}`;
    expectCell(row.step, 'count', n, what('step'));
    expectCell(row.cpu_dur, 'us', s.cpu_dur_us, what('cpu_dur'));
    expectCell(row.gpu_dur, 'us', s.gpu_dur_us, what('gpu_dur'));
    expectCell(row.step_dur, 'us', s.dur_us, what('step_dur'));
    for (const [key, us] of Object.entries(s.breakdown)) expectCell(row[key], 'us', us, what(key));

    expect(row.cpu_dur.value, what('cpu_dur = the ProfilerStep event (ns)')).toBe(stepEvents.get(n) * 1e3);
    // The breakdown splits the step span: its categories add up to the step duration shown.
    const parts = Object.keys(s.breakdown).reduce((sum, key) => sum + row[key].value, 0);
    expect(parts, what('breakdown sum (ns)')).toBe(row.step_dur.value);
  }
});
