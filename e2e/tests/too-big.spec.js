// Journey: open a trace too big for a browser tab: a gzip bomb (6.5 MB of gzip inflating to
// 6.7 GB of JSON, generated here), and a URL that declares 5.8 GB. The worker stops inflating at
// the tab's budget, or refuses the declared size before downloading, and the page says, in one
// sentence, how big the trace is, what the tab holds and what to do (the engine's
// `budget::TooBig`, tested natively in worker/tests/too_big.rs); then the next file loads.
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { test, expect } = require('../pages/app');

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
    // "This trace inflates to over 5.27 GB of JSON (from the first 5.14 MB of its 6.54 MB of
    // gzip: about 6.7 GB at that rate), more than the 5.27 GB of JSON a browser tab can hold
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

    await app.expectNextFileLoads();
    expect(app.pageErrors).toEqual([]);
  } finally {
    fs.rmSync(file, { force: true });
  }
});

test('a URL declaring 5.8 GB is refused by its size before it downloads', async ({ app, page }) => {
  // Declares 5,800,000,000 bytes (the 24 M-event trace), then sends 64 KiB every 50 ms: the refusal
  // must come from the declared size and close the download.
  let sent = 0;
  let closed;
  const disconnected = new Promise((resolve) => { closed = resolve; });
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5800000000', 'access-control-allow-origin': '*' });
    const piece = Buffer.alloc(64 << 10, 0x20);
    const timer = setInterval(() => { sent += piece.length; res.write(piece); }, 50);
    res.on('close', () => { clearInterval(timer); closed(sent); });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${server.address().port}/big.pt.trace.json`;
    await app.open(`?url=${encodeURIComponent(url)}`);
    const s = await app.state();
    expect(s.status).toBe('error');
    expect(s.error.kind).toBe('too-big');
    expect(s.error.message).toMatch(/^This trace is 5\.80 GB, more than the 5\.27 GB of JSON a browser tab can hold \(.*\): capture fewer steps .* kinetoscope report "big\.pt\.trace\.json"$/);
    expect(await disconnected, 'the download was closed').toBeLessThan(16 << 20);
    await app.screenshot('too-big-declared');
    await app.expectNextFileLoads();
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
