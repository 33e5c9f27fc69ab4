// Journey: open a trace large enough to be split (>= 32 MB of JSON: two 16 MB parts) and check
// that two parts (?workers=2: the load worker reads the first, a parse worker the second, each
// its own range of the picked file) give exactly the single-worker parse (?workers=1), and so
// does the default (one part per core, at most one per 16 MB): same summary (events, phases,
// categories, lanes, flows, links, warnings, truncation); that a load's parse workers are
// booted before it (after the last load) and closed with it, and fresh ones booted for the next;
// and that
// Cancel, pressed while a held download keeps the load from ending, closes the load worker and
// its parse workers. `?workers=N` sets the count whatever the machine's cores (docs/architecture.md),
// so both hold on a 1-core machine too; the workers themselves are watched through Playwright's
// `worker` events (nested workers included) and named by their `self.name`.
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { test, expect } = require('../pages/app');

const { writeBigTrace, watchWorkers, expectCancelled, parsersAhead } = require('../support/big-trace');

/** `self.name` of a parse worker (worker/src/loader/parser.rs `PARSER_NAME`); the load worker has none. */
const PARSER = 'kinetoscope-parse';

test('a large trace parsed in two parts (the load worker and a parse worker) equals the single-worker parse, on any core count', async ({ app, page }) => {
  test.setTimeout(180_000);
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-parse-workers-${process.pid}.json`);
  writeBigTrace(file, 34e6);
  const seen = watchWorkers(page);
  try {
    await app.open('?workers=1', 0);
    const one = await app.upload(file);
    expect(one.error).toBeNull();
    expect(one.summary.parse_workers).toBe(1);
    // The load worker parsed it alone: no parse worker was started.
    expect(await Promise.all(seen.map((w) => w.name))).toEqual(['']);
    await app.screenshot('parse-workers-one');

    const first = seen.length;
    await app.open('?workers=2', 0);
    const many = await app.upload(file);
    expect(many.error).toBeNull();
    expect(many.summary.parse_workers).toBe(2);
    // Each part's reader read its own range: the longest wait for bytes is part of the load's time.
    expect(many.summary.read_wait_ms).toBeGreaterThanOrEqual(0);
    expect(many.summary.read_wait_ms).toBeLessThan(many.summary.parse_ms);
    // This page's load worker, which parses the first part itself, then one parse worker for
    // the second (no load came before, so none was booted ahead): it parsed its part (a split
    // load completes only with the part its pool sends back) and was terminated with its load
    // while the load worker keeps the trace; then a fresh one was booted for the next load.
    // Polled on `seen` itself: a copy taken before the next load's worker was reported (late
    // under load) would never grow.
    await expect.poll(() => seen.length - first, 'a parse worker booted for the next load').toBe(3);
    const started = seen.slice(first);
    expect(await Promise.all(started.map((w) => w.name))).toEqual(['', PARSER, PARSER]);
    await expect.poll(() => started.map((w) => w.closed), 'parse worker closed after the load').toEqual([false, true, false]);
    await app.screenshot('parse-workers-many');

    const strip = ({ parse_ms, parse_workers, read_wait_ms, finish_ms, ...rest }) => rest;
    expect(strip(many.summary)).toEqual(strip(one.summary));

    const ahead = seen.length;
    await app.open('', 1);
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    // The new page's load worker; after the demo's load, one parse worker per other core
    // booted for the next load.
    const parsers = await parsersAhead(page);
    await expect.poll(() => Promise.all(seen.slice(ahead).map((w) => w.name)), 'parse workers booted after the demo').toEqual(['', ...parsers]);
    const booted = seen.slice(ahead + 1);
    const byDefault = await app.upload(file);
    expect(byDefault.error).toBeNull();
    expect(byDefault.summary.parse_workers).toBe(Math.min(cores, 2));
    if (cores > 1) {
      // The load took them as they were (they parsed its parts and closed with it); only the
      // next load's were started after.
      await expect.poll(() => booted.map((w) => w.closed), 'the booted parse workers parsed the load').toEqual(booted.map(() => true));
      await expect.poll(() => seen.slice(ahead + 1 + booted.length).filter((w) => !w.closed).length).toBe(booted.length);
    }
    expect(strip(byDefault.summary)).toEqual(strip(one.summary));
    expect(one.summary.events).toBeGreaterThan(200_000);
    expect(app.pageErrors).toEqual([]);
  } finally {
    fs.rmSync(file, { force: true });
  }
});

test('a syntax error in the first of two parts: the file is read again as one stream, as ?workers=1 reads it', async ({ app }) => {
  test.setTimeout(180_000);
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-parse-broken-${process.pid}.json`);
  writeBigTrace(file, 34e6);
  // A ':' made '!' a quarter in: the first part cannot end cleanly at its cut.
  const bytes = fs.readFileSync(file);
  bytes[bytes.indexOf(':', bytes.length >> 2)] = '!'.charCodeAt(0);
  fs.writeFileSync(file, bytes);
  try {
    await app.open('?workers=1', 1);
    const one = await app.upload(file);
    await app.open('?workers=2', 1);
    const two = await app.upload(file);
    expect(one.error).toBeNull();
    expect(one.summary.truncated).toBe(true);
    expect(two.summary.parse_workers).toBe(1);
    const strip = ({ parse_ms, read_wait_ms, finish_ms, ...rest }) => rest;
    expect(strip(two.summary)).toEqual(strip(one.summary));
    expect(app.pageErrors).toEqual([]);
  } finally {
    fs.rmSync(file, { force: true });
  }
});

test('Cancel while the parse workers wait for a large file ends the load and closes them; the next file loads', async ({ app, page }) => {
  test.setTimeout(180_000);
  // A 40 MB trace (two 16 MB parts) served from another origin that holds its last KiB back:
  // the load cannot end before Cancel on any machine, however fast. The parse-worker pool is
  // spawned when the declared size is known, so it is up while the bytes wait.
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-parse-cancel-${process.pid}.json`);
  writeBigTrace(file, 40e6);
  const total = fs.statSync(file).size;
  const held = 1024;
  let sent = 0;
  let closed;
  const disconnected = new Promise((resolve) => { closed = resolve; });
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(total), 'access-control-allow-origin': '*' });
    const body = fs.createReadStream(file, { end: total - held - 1 });
    body.on('data', (chunk) => { sent += chunk.length; res.write(chunk); });
    res.on('close', () => { body.destroy(); closed(sent); });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const workers = watchWorkers(page);
  try {
    const url = `http://127.0.0.1:${server.address().port}/held.pt.trace.json`;
    await page.goto(`/?workers=2&url=${encodeURIComponent(url)}`);
    await expect(app.page.getByTestId('progress')).toBeVisible();
    await expect.poll(() => sent, { message: 'all but the held bytes sent', timeout: 60_000 }).toBe(total - held);
    // The load worker plus one parse worker per part, all running.
    await expect.poll(() => workers.filter((w) => !w.closed).length, { message: 'load and parse workers up' }).toBe(3);
    const before = workers.filter((w) => !w.closed);
    expect(await Promise.all(before.map((w) => w.name))).toEqual(['', PARSER, PARSER]);
    await app.page.getByTestId('cancel-load').click();
    expect(await disconnected, 'the held download was closed').toBe(total - held);
    await expectCancelled(app, before);
  } finally {
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(file, { force: true });
  }
});
