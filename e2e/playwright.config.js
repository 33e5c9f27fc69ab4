// Playwright on Debian's /usr/bin/chromium (never `npx playwright install`), serving the built site:
// ../dist, or $E2E_DIST (scripts/test builds into target/test-dist).
// Fixed viewport, scale factor 1 and font flags so screenshots are stable. Run via scripts/test.
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { defineConfig } = require('@playwright/test');

// The site's port: $E2E_PORT, else one free at run time (the system's pick for port 0), chosen
// once, where the config is first read, and handed to the worker processes, which inherit the
// environment, so two runs on one machine never share a port.
if (!process.env.E2E_PORT) {
  process.env.E2E_PORT = execFileSync(process.execPath, ['-e', `
    const s = require('node:net').createServer().listen(0, '127.0.0.1', () => {
      process.stdout.write(String(s.address().port)); s.close();
    });`], { encoding: 'utf8' }).trim();
}
const PORT = Number(process.env.E2E_PORT);
const DIST = path.resolve(__dirname, process.env.E2E_DIST || '../dist');

module.exports = defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  timeout: 60_000,
  expect: { timeout: 20_000 },
  retries: 0,
  // Spec files run two at a time (each file's tests in order): no two share a port (servers.js
  // and the site's port are picked free at run time) or a file (each test writes under its own
  // test-results dir). Timings are printed by the bench specs, never asserted here.
  workers: Number(process.env.E2E_WORKERS || 2),
  forbidOnly: !!process.env.CI,
  reporter: [['list'], ['json', { outputFile: 'test-results/results.json' }]],
  use: {
    baseURL: `http://127.0.0.1:${PORT}/`,
    browserName: 'chromium',
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--font-render-hinting=none', '--disable-font-subpixel-positioning', '--disable-lcd-text',
      ],
    },
  },
  webServer: {
    command: `python3 -m http.server ${PORT} --bind 127.0.0.1 --directory '${DIST}'`,
    url: `http://127.0.0.1:${PORT}/`,
    reuseExistingServer: false,
    stdout: 'ignore',
    stderr: 'ignore', // http.server logs every request on stderr
    timeout: 30_000,
  },
});
