// Extra static servers for the share-link tests: the built site under a sub-path with traces
// next to it, and a second origin that serves a trace without CORS headers. Plain node:http on
// ephemeral ports; `close()` when done.
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { CLI } = require('./fixtures');

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json', '.gz': 'application/gzip' };

/**
 * Serves `mounts` ({ '/prefix/': directory or file }) on 127.0.0.1; `headers` are added to
 * every response. Resolves to { origin, close }.
 */
function serve(mounts, headers = {}) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const pathname = decodeURIComponent(url.pathname);
    for (const [prefix, target] of Object.entries(mounts)) {
      if (!pathname.startsWith(prefix)) continue;
      let file = target;
      if (fs.statSync(target).isDirectory()) {
        file = path.join(target, pathname.slice(prefix.length) || 'index.html');
        if (!path.resolve(file).startsWith(path.resolve(target))) break;
        if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
      }
      if (!fs.existsSync(file)) break;
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream', ...headers });
      fs.createReadStream(file).pipe(res);
      return;
    }
    res.writeHead(404, headers);
    res.end('not found');
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      // Open downloads (a page still fetching when a test fails) would keep `close` waiting.
      const close = () => new Promise((r) => { server.close(r); server.closeAllConnections(); });
      resolve({ origin: `http://127.0.0.1:${port}`, close });
    });
  });
}

/**
 * Starts `kinetoscope serve DIR` with the built site on a port the system picks (`--port 0`:
 * free at run time); resolves to { url, stop } once it printed its URL, which names the port
 * it bound.
 */
function startServe(dir) {
  const site = path.resolve(__dirname, '..', process.env.E2E_DIST || '../dist');
  const child = spawn(CLI, ['serve', dir, '--port', '0', '--site', site], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/\S+\//);
      if (m) resolve({ url: m[0], stop: () => child.kill() });
    });
    child.on('exit', (code) => reject(new Error(`kinetoscope serve exited ${code}: ${out}`)));
  });
}

/**
 * Serves the one file `file` at `/NAME` on 127.0.0.1 (CORS `*`, so the site's page on its own
 * port may read it). With `ranges`, as static hosts and `kinetoscope serve` do: `Accept-Ranges:
 * bytes`, a `Range: bytes=A-B` request answered 206 with those bytes (the only form the worker
 * sends); without, a plain 200 of the whole file to every request, `Range` ignored. Counts the
 * requests answered 206 (`ranged()`). `/blank` is an empty page of its origin. Resolves to
 * { url, ranged, close }.
 */
function serveFile(file, { ranges }) {
  const size = fs.statSync(file).size;
  let ranged = 0;
  const server = http.createServer((req, res) => {
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'range', 'access-control-expose-headers': 'accept-ranges, content-range' };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors);
      res.end();
      return;
    }
    // An empty page of the file's origin, where a benchmark starts workers (bench.readAloneMs).
    if (req.url === '/blank') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html>');
      return;
    }
    const head = { ...cors, 'content-type': 'application/json', ...(ranges ? { 'accept-ranges': 'bytes' } : {}) };
    const m = ranges && /^bytes=(\d+)-(\d+)$/.exec(req.headers.range || '');
    if (m) {
      const [start, end] = [Number(m[1]), Math.min(Number(m[2]), size - 1)];
      if (start > end) {
        res.writeHead(416, { ...head, 'content-range': `bytes */${size}` });
        res.end();
        return;
      }
      ranged += 1;
      res.writeHead(206, { ...head, 'content-length': String(end - start + 1), 'content-range': `bytes ${start}-${end}/${size}` });
      fs.createReadStream(file, { start, end }).pipe(res);
      return;
    }
    res.writeHead(200, { ...head, 'content-length': String(size) });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      const close = () => new Promise((r) => { server.close(r); server.closeAllConnections(); });
      resolve({ url: `http://127.0.0.1:${port}/${path.basename(file)}`, ranged: () => ranged, close });
    });
  });
}

module.exports = { serve, serveFile, startServe };
