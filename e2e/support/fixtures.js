// Where the e2e tests find things, and how they get the expected numbers: real traces from the
// shared fixtures (../../shared relative to e2e/, or $KINETOSCOPE_SHARED), and the native CLI
// (`kinetoscope info --json`, built by `cargo test` in scripts/test) as the oracle for what the page must show.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { expect } = require('@playwright/test');

const E2E_DIR = path.resolve(__dirname, '..');
const REPO_DIR = path.resolve(E2E_DIR, '..');
const SHARED_DIR = path.resolve(process.env.KINETOSCOPE_SHARED || path.join(E2E_DIR, '../../shared'));
const CLI = path.resolve(process.env.KINETOSCOPE_CLI || path.join(REPO_DIR, 'target/debug/kinetoscope'));
const DEMO_TRACE = path.join(REPO_DIR, 'public/demo.pt.trace.json.gz');
const RESULTS_DIR = path.join(E2E_DIR, 'test-results');

/** Absolute path of a file in the shared `fixtures/real/`; throws (never skips) when missing. */
function realFixture(name) {
  const file = path.join(SHARED_DIR, 'fixtures', 'real', name);
  if (!fs.existsSync(file)) {
    throw new Error(`missing fixture ${file} (set KINETOSCOPE_SHARED to the shared directory)`);
  }
  return file;
}

/** Absolute path of a file in the shared `fixtures/torch-cpu/`; throws (never skips) when missing. */
function torchCpuFixture(name) {
  const file = path.join(SHARED_DIR, 'fixtures', 'torch-cpu', name);
  if (!fs.existsSync(file)) {
    throw new Error(`missing fixture ${file} (set KINETOSCOPE_SHARED to the shared directory)`);
  }
  return file;
}

/** Absolute path of a file in the shared `fixtures/torch-cpu-memory/` (PyTorch runs with their
 *  memory truth); throws (never skips) when missing. */
function memoryFixture(name) {
  const file = path.join(SHARED_DIR, 'fixtures', 'torch-cpu-memory', name);
  if (!fs.existsSync(file)) {
    throw new Error(`missing fixture ${file} (set KINETOSCOPE_SHARED to the shared directory)`);
  }
  return file;
}

/** `kinetoscope info --json FILE`, parsed, as the page's `TraceSummary`: without the contract
 *  keys `schema` / `schema_version` (docs/ci.md), which the CLI adds and the page does not. */
function cliInfo(file) {
  const out = execFileSync(CLI, ['info', '--json', file], { encoding: 'utf8', maxBuffer: 256 << 20 });
  const { schema, schema_version: version, ...summary } = JSON.parse(out);
  if (schema !== 'kinetoscope.info' || version !== 1) throw new Error(`info --json: schema ${schema} v${version}`);
  return summary;
}

/** `kinetoscope report --json FILE ...ARGS`, parsed. */
function cliReport(file, ...args) {
  const out = execFileSync(CLI, ['report', '--json', file, ...args], { encoding: 'utf8', maxBuffer: 256 << 20 });
  return JSON.parse(out);
}

/** The protocol version the worker and app must report (from worker/protocol/src/lib.rs). */
function protocolVersion() {
  const src = fs.readFileSync(path.join(REPO_DIR, 'worker/protocol/src/lib.rs'), 'utf8');
  const m = /PROTOCOL_VERSION:\s*u32\s*=\s*(\d+)/.exec(src);
  if (!m) throw new Error('PROTOCOL_VERSION not found in worker/protocol/src/lib.rs');
  return Number(m[1]);
}

// Differ legitimately between the page and the CLI: the name given, wall time, and how many
// parts the JSON was parsed in (the CLI parses sequentially; the page splits 32 MB or more
// across parse workers, which must not change anything else).
const NOT_COMPARED = new Set(['file_name', 'parse_ms', 'parse_workers', 'read_wait_ms', 'finish_ms', 'span_us']);

/** The page's TraceSummary equals the CLI's, field by field (span_us within 0.001 µs). */
function expectSameSummary(actual, expected) {
  for (const key of Object.keys(expected)) {
    if (NOT_COMPARED.has(key)) continue;
    expect(actual[key], `summary.${key}`).toEqual(expected[key]);
  }
  expect(Object.keys(actual).sort(), 'summary fields').toEqual(Object.keys(expected).sort());
  expect(Math.abs(actual.span_us - expected.span_us), 'summary.span_us (|page - cli|)').toBeLessThanOrEqual(0.001);
}

/** Integers written in `text`, whatever the thousands separator ("1,234", "1 234", "1234"). */
function numbersIn(text) {
  return (text.match(/\d+(?:[,\u00a0\u202f' ]\d{3})*/g) || []).map((s) => Number(s.replace(/\D/g, '')));
}

module.exports = {
  SHARED_DIR, CLI, DEMO_TRACE, RESULTS_DIR,
  realFixture, torchCpuFixture, memoryFixture, cliInfo, cliReport, protocolVersion, expectSameSummary, numbersIn,
};
