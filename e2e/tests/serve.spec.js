// Journey: a team's log directory. `kinetoscope serve LOGDIR` on a temp directory with two runs
// made of real fixtures (the 4 DLRM workers, the 2 sampled HTA ranks): the page lists them newest
// first with their ranks (and step counts once known), filters by name, opens a trace (`?url=`)
// and a run (`?run=`). Then
// `kinetoscope publish LOGDIR OUT` served by a plain static server (python3 -m http.server) from
// a sub-path opens the same views.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { test, expect } = require('../pages/app');
const { RunPage } = require('../pages/run');
const { CLI, realFixture } = require('../support/fixtures');
const { startServe } = require('../support/servers');

const DIST = path.resolve(__dirname, '..', process.env.E2E_DIST || '../dist');
const DLRM = [0, 1, 2, 3].map((w) => fs.readdirSync(path.dirname(realFixture('hta__trace_filter__sampled_rank-0.json.gz')))
  .find((n) => n.startsWith(`param__dlrm_kineto__worker${w}_`)));
const HTA = ['hta__trace_filter__sampled_rank-0.json.gz', 'hta__trace_filter__sampled_rank-1.json.gz'];

/** LOGDIR/dlrm (4 ranks, an hour old) and LOGDIR/hta (2 ranks, newer), plus a non-trace JSON. */
function logdir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kinetoscope-logdir-'));
  const put = (run, names, age) => {
    fs.mkdirSync(path.join(dir, run));
    for (const name of names) {
      const to = path.join(dir, run, name);
      fs.copyFileSync(realFixture(name), to);
      const when = new Date(Date.now() - age * 1000);
      fs.utimesSync(to, when, when);
    }
  };
  put('dlrm', DLRM, 3600);
  put('hta', HTA, 60);
  fs.writeFileSync(path.join(dir, 'dlrm', 'config.json'), '{"lr": 0.1}');
  return dir;
}

/** Starts `python3 -m http.server` over `dir` on a port the system picks (port 0: free at run
 *  time); resolves to { origin, stop } once it said which port it bound and answers there. */
async function startStatic(dir) {
  const child = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir], { stdio: ['ignore', 'pipe', 'ignore'] });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/port (\d+)/);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`http.server exited ${code}: ${out}`)));
  });
  child.stdout.resume(); // keep draining its request log
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${origin}/`);
      return { origin, stop: () => child.kill() };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill();
  throw new Error('http.server did not start');
}

/** The gallery as data: [{ name, traces: [{ name, rank }] }] in display order. */
async function gallery(page) {
  await expect(page.getByTestId('gallery')).toBeVisible();
  return page.getByTestId('gallery-run').evaluateAll((runs) => runs.map((r) => ({
    name: r.querySelector('[data-testid="run-name"]').textContent,
    traces: [...r.querySelectorAll('[data-testid="gallery-trace"]')].map((t) => ({
      name: t.cells[0].textContent, rank: t.cells[1].textContent,
    })),
  })));
}

/** The steps column of run `name`, in display order. */
async function stepsOf(page, name) {
  return page.locator(`[data-testid="gallery-run"][data-name="${name}"] [data-testid="gallery-trace"]`)
    .evaluateAll((rows) => rows.map((t) => t.cells[4].textContent));
}

/** At the gallery `url`: lists both runs, filters, opens a trace and (from the list again) a run. */
async function galleryJourney(app, page, url) {
  await page.goto(url);
  expect(await gallery(page)).toEqual([
    { name: 'hta', traces: HTA.map((name, rank) => ({ name, rank: String(rank) })) },
    { name: 'dlrm', traces: DLRM.map((name, rank) => ({ name, rank: String(rank) })) },
  ]);
  expect(await page.evaluate(() => window.kinetoscope.loads)).toBe(0);

  await page.getByTestId('gallery-filter').fill('worker2');
  expect(await gallery(page)).toEqual([{ name: 'dlrm', traces: [{ name: DLRM[2], rank: '2' }] }]);
  await page.getByTestId('gallery-filter').fill('');

  // A trace opens as a trace.
  await page.locator('[data-testid="gallery-run"][data-name="hta"]').getByTestId('open-trace').nth(1).click();
  await app.waitForLoads(1);
  await app.waitForTimeline();
  const s = await app.state();
  expect(s.status).toBe('ready');
  expect(s.summary.file_name).toBe(HTA[1]);
  expect(page.url()).toContain('?url=logs%2Fhta%2F');

  // Back to the list; a run opens as a run.
  await page.goBack();
  await expect(page.getByTestId('gallery')).toBeVisible();
  await page.locator('[data-testid="gallery-run"][data-name="dlrm"]').getByTestId('open-run').click();
  const run = new RunPage(app);
  await run.waitForRun(1);
  const r = await run.state();
  expect(r.ranks).toEqual([0, 1, 2, 3]);
  expect(page.url()).toContain('?run=logs%2Fdlrm%2Frun.json');
  return r;
}

test('kinetoscope serve: two runs listed, a trace opens, a run opens', async ({ app, page }) => {
  const dir = logdir();
  const server = await startServe(dir);
  try {
    // The URL printed names the port bound, not the 0 asked for.
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/$/);
    await galleryJourney(app, page, server.url);
    await app.screenshot('serve-run');
    // A trace written while serving appears on reload.
    fs.mkdirSync(path.join(dir, 'new-job'));
    fs.copyFileSync(realFixture(HTA[0]), path.join(dir, 'new-job', HTA[0]));
    await page.goto(server.url);
    expect((await gallery(page))[0].name).toBe('new-job');
    // Step counts arrive from the server's background count: "—" at first, then on a reload.
    await expect.poll(async () => {
      await page.reload();
      await expect(page.getByTestId('gallery')).toBeVisible();
      return [await stepsOf(page, 'dlrm'), await stepsOf(page, 'hta')];
    }, { timeout: 20_000 }).toEqual([['1', '1', '1', '1'], ['2', '2']]);
    await app.screenshot('serve-gallery');
  } finally {
    server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('kinetoscope publish: the folder on a plain static server under a sub-path opens the same views', async ({ app, page }) => {
  const dir = logdir();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kinetoscope-published-'));
  const out = path.join(root, 'team', 'kinetoscope');
  execFileSync(CLI, ['publish', dir, out, '--site', DIST], { stdio: 'pipe' });
  const server = await startStatic(root);
  try {
    const r = await galleryJourney(app, page, `${server.origin}/team/kinetoscope/`);
    expect(r.ranks.length).toBe(4);
    // publish counted the steps (distinct ProfilerStep#N: #10 in each DLRM worker, 2 in each HTA rank).
    await page.goto(`${server.origin}/team/kinetoscope/`);
    await expect(page.getByTestId('gallery-run')).toHaveCount(2);
    expect(await stepsOf(page, 'dlrm')).toEqual(['1', '1', '1', '1']);
    expect(await stepsOf(page, 'hta')).toEqual(['2', '2']);
  } finally {
    server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  }
});
