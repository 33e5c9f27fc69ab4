// What the browser benchmarks measure beside the app: the tab's resident memory, and V8's own
// JSON.parse of the same bytes (the anchor each parse+index time is set against).
const { execSync } = require('child_process');

/** Resident bytes of every Chromium process together (the browser, its renderers, GPU, workers). */
function chromiumRss() {
  try {
    return execSync('ps -C chromium -o rss=', { encoding: 'utf8' })
      .split('\n').filter(Boolean).reduce((sum, kb) => sum + Number(kb) * 1024, 0);
  } catch {
    return 0;
  }
}

/**
 * `chromiumRss` once it settled: a load's workers terminated just before free their memory over
 * the next second or two, and an idle figure read while they do is too high (a peak after it
 * then read below it). Samples every 250 ms until four readings in a row are within 4 MiB, at
 * most 10 s.
 */
async function settledRss() {
  const readings = [chromiumRss()];
  for (const start = Date.now(); Date.now() - start < 10_000;) {
    await new Promise((r) => setTimeout(r, 250));
    readings.push(chromiumRss());
    const last = readings.slice(-4);
    if (last.length === 4 && Math.max(...last) - Math.min(...last) < 4 << 20) break;
  }
  return readings[readings.length - 1];
}

/** Samples `chromiumRss` every 100 ms until the returned stop() gives the peak. */
function sampleRss() {
  let peak = chromiumRss();
  const timer = setInterval(() => { peak = Math.max(peak, chromiumRss()); }, 100);
  return () => { clearInterval(timer); return Math.max(peak, chromiumRss()); };
}

/**
 * V8's own JSON.parse of the same bytes in the same page, ms (text decoding not counted). V8
 * strings stop near 512 M characters, so a larger trace is parsed as pieces cut between events
 * (each closed as a valid document): the same bytes, the same work, a few brackets more.
 */
async function v8JsonParseMs(page, href) {
  return page.evaluate(async (href) => {
    const bytes = new Uint8Array(await (await fetch(href)).arrayBuffer());
    const limit = 400e6;
    const cuts = [0];
    const marker = new TextEncoder().encode('},');
    for (let at = limit; at < bytes.length; at = cuts[cuts.length - 1] + limit) {
      let i = at;
      // The end of an event: '}' ',' then whitespace and '{'.
      for (; i < bytes.length - 1; i++) {
        if (bytes[i] !== marker[0] || bytes[i + 1] !== marker[1]) continue;
        let j = i + 2;
        while (bytes[j] === 10 || bytes[j] === 32 || bytes[j] === 13 || bytes[j] === 9) j++;
        if (bytes[j] === 123) break;
      }
      if (i >= bytes.length - 1) break;
      cuts.push(i + 1);
    }
    cuts.push(bytes.length);
    const decoder = new TextDecoder();
    let ms = 0;
    for (let k = 0; k + 1 < cuts.length; k++) {
      let text = decoder.decode(bytes.subarray(k === 0 ? 0 : cuts[k] + 1, cuts[k + 1]));
      // Kineto's object form: {"traceEvents":[ ... ], ...}; the middle pieces are bare arrays.
      if (cuts.length > 2) {
        if (k === 0) text = text + ']}';
        else if (k + 2 === cuts.length) text = '{"traceEvents":[' + text;
        else text = '[' + text + ']';
      }
      const started = performance.now();
      JSON.parse(text);
      ms += performance.now() - started;
      text = null;
    }
    return { ms, pieces: cuts.length - 1 };
  }, href);
}

/**
 * Posts the bytes the bench fetched into `window.__benchBytes` to the page as an embedder would
 * (`postMessage` with the buffer transferred), and waits for that load.
 */
async function postBenchBytes(app) {
  const before = await app.page.evaluate(() => window.kinetoscope.loads);
  await app.page.evaluate(() => {
    const buffer = window.__benchBytes;
    window.__benchBytes = null;
    window.postMessage({ kinetoscope: { buffer, fileName: 'posted.json' } }, '*', [buffer]);
  });
  await app.waitForLoads(before + 1);
}

/**
 * The browser's own cost of getting the bytes, ms, parsing nothing: `workers` dedicated workers
 * each read their share as the parse workers do and copy it into a buffer. A picked `file`:
 * four 8 MiB `Blob.arrayBuffer` reads in flight; a `url` of `size` bytes (its server answering
 * `Range`, with a `/blank` page: `servers.serveFile`): one ranged request per share, its body
 * read as it arrives. The floor under that way's `parse_ms`. Run in a blank page of the same
 * browser: the app's CSP allows no worker from a blob.
 */
async function readAloneMs(context, { file, url, size }, workers) {
  const page = await context.newPage();
  try {
    if (url) {
      await page.goto(new URL('/blank', url).href);
    } else {
      await page.setContent('<input type="file" id="bench-read">');
      await page.setInputFiles('#bench-read', file);
    }
    return await page.evaluate(async ({ url, workers, size }) => {
      const input = document.getElementById('bench-read');
      const from = input ? input.files[0] : url;
      if (input) size = from.size;
      const source = `onmessage = async ({ data: [from, start, to] }) => {
        if (typeof from === 'string') {
          const copy = new Uint8Array(1 << 20);
          const body = (await fetch(from, { headers: { range: 'bytes=' + start + '-' + (to - 1) } })).body.getReader();
          for (;;) {
            const { done, value } = await body.read();
            if (done) break;
            for (let at = 0; at < value.length; at += copy.length) copy.set(value.subarray(at, at + copy.length));
          }
        } else {
          const slice = 8 << 20, copy = new Uint8Array(slice), reading = [];
          let next = start;
          const ask = () => { reading.push(from.slice(next, Math.min(next + slice, to)).arrayBuffer()); next += slice; };
          while (next < to && reading.length < 4) ask();
          while (reading.length) {
            const bytes = new Uint8Array(await reading.shift());
            if (next < to) ask();
            copy.set(bytes);
          }
        }
        postMessage(0);
      };`;
      const script = URL.createObjectURL(new Blob([source]));
      const share = Math.ceil(size / workers);
      const started = performance.now();
      await Promise.all(Array.from({ length: workers }, (_, k) => new Promise((done, failed) => {
        const w = new Worker(script);
        w.onmessage = () => { w.terminate(); done(); };
        w.onerror = (e) => failed(new Error(`read worker: ${e.message}`));
        w.postMessage([from, k * share, Math.min(size, (k + 1) * share)]);
      })));
      URL.revokeObjectURL(script);
      return performance.now() - started;
    }, { url, workers, size });
  } finally {
    await page.close();
  }
}

module.exports = { chromiumRss, settledRss, sampleRss, v8JsonParseMs, postBenchBytes, readAloneMs };
