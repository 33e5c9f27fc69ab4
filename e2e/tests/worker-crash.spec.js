// Journey: a worker dies mid-load (a parse worker while it parses its part, or the load worker
// as its load starts); the page names what died, stays usable, and the next file loads.
//
// The hook: the site is served here, and while armed the server hands out a worker_loader.js
// whose worker throws on its first message if its role matches ('kinetoscope-parse' is the
// parse workers' name, '' the load worker's). An uncaught exception reaches the parent as an
// `error` event, as a trap or a panic does (the worker's panic hook throws the panic's message).
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { test, expect } = require('../pages/app');

const DIST = path.resolve(__dirname, '..', process.env.E2E_DIST || '../dist');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.gz': 'application/gzip' };

/** Serves DIST; `arm(role)` makes the workers of that role spawned next throw on their first message. */
async function serveSite() {
  let role = null;
  const server = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.join(DIST, pathname === '/' ? 'index.html' : pathname);
    if (!path.resolve(file).startsWith(DIST) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404);
      res.end('not found');
      return;
    }
    let body = fs.readFileSync(file);
    if (pathname === '/worker_loader.js' && role !== null) {
      const kill = `if (self.name === ${JSON.stringify(role)}) self.addEventListener('message', () => { throw new Error('killed by the e2e test'); });\n`;
      body = Buffer.concat([Buffer.from(kill), body]);
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    arm: (r) => { role = r; },
    close: () => new Promise((resolve) => { server.close(resolve); server.closeAllConnections(); }),
  };
}

/** Writes a trace of at least `minBytes` (split in parts, one per parse worker, from 32 MB). */
function writeBigTrace(file, minBytes) {
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, '{"traceEvents":[\n{"ph":"M","name":"process_name","pid":1,"args":{"name":"trainer"}}');
  let bytes = 0;
  for (let i = 0; bytes < minBytes; i++) {
    const lines = [];
    for (let k = 0; k < 1000; k++) {
      const ts = 1000 + (i * 1000 + k) * 10;
      lines.push(`,\n{"ph":"X","cat":"cpu_op","name":"aten::op_${k % 17}","pid":1,"tid":${1 + (k % 2)},"ts":${ts},"dur":8,"args":{"External id": ${k}}}`);
    }
    const chunk = lines.join('');
    fs.writeSync(fd, chunk);
    bytes += chunk.length;
  }
  fs.writeSync(fd, '\n]}\n');
  fs.closeSync(fd);
}

test.describe('a worker that dies mid-load', () => {
  let site;
  test.beforeAll(async () => { site = await serveSite(); });
  test.afterAll(async () => { await site.close(); });

  test('a parse worker killed while it parses: the page names it, the next file loads', async ({ app, page }) => {
    // ?workers=2: two parse workers whatever the machine's cores (by default, one per core).
    const file = path.join(os.tmpdir(), `kinetoscope-e2e-crash-${process.pid}.json`);
    writeBigTrace(file, 34e6);
    try {
      // Armed before the page opens: the parse workers are booted after the demo's load, ahead
      // of the file's.
      site.arm('kinetoscope-parse');
      await page.goto(`${site.origin}/?workers=2`);
      await app.waitForLoads(1);
      const s = await app.upload(file);
      site.arm(null);
      expect(s.status).toBe('error');
      expect(s.error.kind).toBe('worker');
      expect(s.error.message).toMatch(/^parse worker \d stopped: Uncaught Error: killed by the e2e test$/);
      await expect(app.error).toContainText('parse worker');
      await app.screenshot('crash-parse-worker');

      await app.expectNextFileLoads();
      expect(app.pageErrors).toEqual([]);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  test('the load worker killed as its load starts: the page names it, the next file loads', async ({ app, page }) => {
    site.arm('');
    await page.goto(`${site.origin}/`);
    await app.waitForLoads(1);
    site.arm(null);
    const s = await app.state();
    expect(s.status).toBe('error');
    expect(s.error.kind).toBe('worker');
    expect(s.error.message).toBe('the load worker stopped: Uncaught Error: killed by the e2e test');
    await expect(app.error).toContainText('the load worker stopped');
    await app.screenshot('crash-load-worker');

    await app.expectNextFileLoads();
    expect(app.pageErrors).toEqual([]);
  });
});
