// Journey: a URL whose body is large (Content-Length >= 32 MiB, worker/src/web/pump.rs) is
// downloaded by a download worker while the load worker parses: the trace equals the same file
// picked from disk, the URL is requested twice (the load worker's own request, cancelled once its
// size is known, then the download worker's), and the download worker is gone after the load.
// Cancel while it downloads closes the download and every worker of the load. A small URL is
// read by the load worker alone. Cancel while a gzip is inflated and cut for the parse workers
// closes them and the download too. The server is a local one on another origin (CORS `*`), so
// requests can be counted and a download held back.
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { test, expect } = require('../pages/app');
const { writeBigTrace, watchWorkers, expectCancelled, parsersAhead } = require('../support/big-trace');

/** `self.name` of the download worker (`pump::NAME`); the load worker has none. */
const PUMP = 'kinetoscope-fetch';

/** Serves `file` at any path with CORS `*`, holding back its last `held` bytes; counts requests.
 * Its URL ends in `name`. */
async function serve(file, held = 0, name = 'big.pt.trace.json') {
  const total = fs.statSync(file).size;
  const state = { requests: 0, closed: 0 };
  const server = http.createServer((req, res) => {
    state.requests += 1;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(total), 'access-control-allow-origin': '*' });
    const body = fs.createReadStream(file, { end: total - held - 1 });
    body.pipe(res, { end: held === 0 });
    res.on('close', () => { body.destroy(); state.closed += 1; });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/${name}`;
  return { url, state, close: () => new Promise((resolve) => server.close(resolve)) };
}

test('a large URL is downloaded by the download worker and equals the same file picked', async ({ app, page }) => {
  test.setTimeout(180_000);
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-pump-${process.pid}.json`);
  writeBigTrace(file, 40e6);
  const server = await serve(file);
  const seen = watchWorkers(page);
  try {
    await app.open(`?url=${encodeURIComponent(server.url)}`);
    const fetched = await app.state();
    expect(fetched.error).toBeNull();
    expect(server.state.requests, 'the load worker asked, then the download worker').toBe(2);
    // Then the next load's parse workers, booted after this one and idle (worker.rs `warm`).
    const ahead = await parsersAhead(page);
    await expect.poll(() => Promise.all(seen.map((w) => w.name)), 'load, download, then idle parse workers').toEqual(['', PUMP, ...ahead]);
    await expect.poll(() => seen.map((w) => w.closed), 'the download worker closed after the load').toEqual([false, true, ...ahead.map(() => false)]);
    expect(fetched.summary.read_wait_ms).toBeGreaterThanOrEqual(0);

    const picked = await app.upload(file);
    expect(picked.error).toBeNull();
    // The URL streamed by the load worker; the file picked is read in parts by parse workers
    // where the machine has two cores (worker.rs `read_in_parts`).
    expect(fetched.summary.parse_workers).toBe(1);
    const strip = ({ parse_ms, read_wait_ms, finish_ms, file_name, parse_workers, ...rest }) => rest;
    expect(strip(fetched.summary)).toEqual(strip(picked.summary));
    expect(picked.summary.events).toBeGreaterThan(200_000);
    expect(app.pageErrors).toEqual([]);
  } finally {
    await server.close();
    fs.rmSync(file, { force: true });
  }
});

test('Cancel while the download worker downloads closes the download and the workers; the next file loads', async ({ app, page }) => {
  test.setTimeout(180_000);
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-pump-cancel-${process.pid}.json`);
  writeBigTrace(file, 40e6);
  const server = await serve(file, 1024);
  const seen = watchWorkers(page);
  try {
    await page.goto(`/?url=${encodeURIComponent(server.url)}`);
    await expect(app.page.getByTestId('progress')).toBeVisible();
    await expect.poll(() => server.state.requests, { message: 'the download worker asked', timeout: 60_000 }).toBe(2);
    await expect.poll(() => seen.filter((w) => !w.closed).length, { message: 'load and download workers up' }).toBe(2);
    expect(await Promise.all(seen.map((w) => w.name))).toEqual(['', PUMP]);
    await app.page.getByTestId('cancel-load').click();
    await expect.poll(() => server.state.closed, { message: 'both downloads closed' }).toBe(2);
    await expectCancelled(app, seen);
  } finally {
    await server.close();
    fs.rmSync(file, { force: true });
  }
});

test('a small URL is read by the load worker alone', async ({ app, page }) => {
  const file = path.join(os.tmpdir(), `kinetoscope-e2e-pump-small-${process.pid}.json`);
  writeBigTrace(file, 1e6);
  const server = await serve(file);
  const seen = watchWorkers(page);
  try {
    await app.open(`?url=${encodeURIComponent(server.url)}`);
    expect((await app.state()).error).toBeNull();
    expect(server.state.requests).toBe(1);
    const ahead = await parsersAhead(page);
    await expect.poll(() => Promise.all(seen.map((w) => w.name)), 'the load worker, then idle parse workers').toEqual(['', ...ahead]);
    await expect.poll(() => seen.map((w) => w.closed)).toEqual([false, ...ahead.map(() => false)]);
  } finally {
    await server.close();
    fs.rmSync(file, { force: true });
  }
});

test('Cancel while a gzip is inflated and cut for the parse workers closes them and the download; the next file loads', async ({ app, page }) => {
  test.setTimeout(180_000);
  const json = path.join(os.tmpdir(), `kinetoscope-e2e-pump-gzip-cancel-${process.pid}.json`);
  writeBigTrace(json, 60e6);
  const gz = `${json}.gz`;
  fs.writeFileSync(gz, require('node:zlib').gzipSync(fs.readFileSync(json), { level: 1 }));
  fs.rmSync(json, { force: true });
  const server = await serve(gz, 1024, 'big.pt.trace.json.gz');
  const seen = watchWorkers(page);
  try {
    await page.goto(`/?workers=2&url=${encodeURIComponent(server.url)}`);
    await expect(app.page.getByTestId('progress')).toBeVisible();
    await expect.poll(() => server.state.requests, { message: 'the download worker asked', timeout: 60_000 }).toBe(2);
    // The load worker, the download worker and the load's two parse workers.
    await expect.poll(async () => (await Promise.all(seen.map((w) => w.name))).filter((n) => n === 'kinetoscope-parse').length, { message: 'parse workers up' }).toBe(2);
    expect((await Promise.all(seen.map((w) => w.name))).slice(0, 2)).toEqual(['', PUMP]);
    await app.page.getByTestId('cancel-load').click();
    await expect.poll(() => server.state.closed, { message: 'both downloads closed' }).toBe(2);
    await expectCancelled(app, seen);
  } finally {
    await server.close();
    fs.rmSync(gz, { force: true });
  }
});
