// Journey: open a trace too big for a browser tab: a gzip bomb (6.5 MB of gzip inflating to
// 6.7 GB of JSON, generated here). The worker stops inflating at the tab's budget and the page
// says, in one sentence, how big the trace is, what the tab holds and what to do (the engine's
// `budget::TooBig`, tested natively in worker/tests/too_big.rs); then the next file loads.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { test, expect } = require('../pages/app');
const { realFixture, cliInfo, expectSameSummary } = require('../support/fixtures');

/** Writes a valid trace that inflates to `copies` x 64 MiB of whitespace as a multi-member
 *  gzip (one member compressed once, repeated), so making 6.7 GB takes a fraction of a second.
 *  Returns the inflated size. */
function writeBomb(file, copies) {
  const head = '{"traceEvents":[{"ph":"X","name":"op","pid":1,"tid":1,"ts":1,"dur":1}';
  const filler = Buffer.alloc(64 << 20, 0x20);
  const member = zlib.gzipSync(filler, { level: 9 });
  const parts = [zlib.gzipSync(head), ...Array(copies).fill(member), zlib.gzipSync(']}')];
  fs.writeFileSync(file, Buffer.concat(parts));
  return head.length + copies * filler.length + 2;
}

test('a gzip bomb is stopped at the tab budget with a sentence; the next file loads', async ({ app, page }) => {
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-bomb-${process.pid}.json.gz`);
  const inflated = writeBomb(file, 100);
  const gzipBytes = fs.statSync(file).size;
  try {
    await app.open();
    const started = Date.now();
    const s = await app.upload(file);
    const ms = Date.now() - started;
    expect(s.status).toBe('error');
    expect(s.error.kind).toBe('too-big');
    // "This trace inflates to over 1.25 GB of JSON (from the first 1.26 MB of its 6.54 MB of
    // gzip: about 6.7 GB at that rate), more than the 1.25 GB of JSON a browser tab can hold
    // (...): capture fewer steps (...) or read it on the command line with kinetoscope report "…""
    const m = /^This trace inflates to over ([\d.]+) GB of JSON \(from the first [\d.]+ [MK]B of its ([\d.]+) MB of gzip: about ([\d.]+) GB at that rate\), more than the ([\d.]+) GB of JSON a browser tab can hold \(4 GiB of wasm memory, about [\d.]+ bytes per JSON byte while loading\): capture fewer steps \(torch\.profiler\.schedule\(wait=1, warmup=1, active=2\)\) or read it on the command line with kinetoscope report "(.+)"$/
      .exec(s.error.message);
    expect(m, s.error.message).not.toBeNull();
    const [, over, gz, about, budget, name] = m;
    expect(Number(over)).toBeGreaterThanOrEqual(Number(budget));
    expect(Number(gz)).toBeCloseTo(gzipBytes / 1e6, 1);
    expect(Math.abs(Number(about) * 1e9 / inflated - 1), `about ${about} GB for ${inflated} bytes`).toBeLessThan(0.15);
    expect(name).toBe(path.basename(file));
    await expect(app.error).toBeVisible();
    await expect(app.error).toHaveAttribute('data-kind', 'too-big');
    await expect(app.error).toContainText('kinetoscope report');
    await app.screenshot('too-big-bomb');
    test.info().annotations.push({ type: 'bomb', description: `${gzipBytes} B of gzip inflating to ${inflated} B: sentence after ${ms} ms` });
    console.log(`bomb: ${gzipBytes} B of gzip -> ${inflated} B of JSON; sentence after ${ms} ms: ${s.error.message}`);

    const next = realFixture('catapult__async_begin_end.json');
    const after = await app.upload(next);
    expect(after.status).toBe('ready');
    expectSameSummary(after.summary, cliInfo(next));
    expect(app.pageErrors).toEqual([]);
  } finally {
    fs.rmSync(file, { force: true });
  }
});
