#!/usr/bin/env python3
"""Counts for issue #26 (stdlib only): how many e2e tests check the page against numbers we did
not compute, which README features no test touches, and which literal numbers on real traces
the Rust tests still pin.

Usage: scripts/check/test_counts.py [GIT_REV]   (default: the working tree)

Method, by grep over the test sources (a heuristic: read the lists it prints):
- e2e: each `test(` block of e2e/tests/*.spec.js, with the spec's top-level helper functions it
  calls (transitively), is "independent" when it uses PyTorch's tables (`torchCpuFixture`), an
  oracle file or a recount of the trace JSON (`recount`, `JSON.parse(fs.readFileSync`), and
  "CLI" when it compares with `cliInfo` / `cliReport` (both may hold).
- README features: each row of FEATURES below is tested when its pattern occurs in e2e/tests, e2e/pages
  (the page objects the specs call) or worker/tests.
- Pinned numbers: in worker/tests, lines holding a literal of 3+ digits in an assert or a table
  of expected / pinned values (through its closing bracket), inside a function or constant that
  names a real fixture (`real(`, `load_real`, `real_fixtures`, `.json`); the 120-column checks
  are left out. Numbers in hand-built traces are ground truth by construction, but a hand-built
  trace in a function that also names a fixture is counted: read the list.
"""
import re
import subprocess
import sys

REV = sys.argv[1] if len(sys.argv) > 1 else None

INDEPENDENT = re.compile(r"torchCpuFixture|recount|JSON\.parse\(.*readFileSync|oracle/")
CLI = re.compile(r"cliInfo\(|cliReport\(")

# (README feature, pattern in e2e/tests or worker/tests that exercises it)
FEATURES = [
    ("drop a file", r"\.drop\("),
    ("pick with Open trace", r"\.upload\("),
    ("?url= link", r"\?url="),
    ("gzipped traces", r"\.gz['\"]"),
    ("W/S zoom", r"press\(['\"][wWsS]['\"]"),
    ("A/D pan", r"press\(['\"][aAdD]['\"]"),
    ("drag pans", r"mouse\.down"),
    ("shift-drag measures", r"range-readout"),
    ("F zooms to the selection", r"press\(['\"][fF]['\"]"),
    ("? shows every key", r"help-overlay"),
    ("nested slices / lanes", r"lane-label"),
    ("kernel <-> launch links", r"launched-by"),
    ("counter tracks", r"counter-label|counters"),
    ("search", r"search-input"),
    ("op table", r"op-table"),
    ("kernel table", r"kernel-table"),
    ("step table", r"step-table"),
    ("charts", r"chart-steps"),
    ("cheatsheet of findings with evidence", r"finding-link"),
    ("compare two traces", r"compare-input|compare-button"),
    ("share links", r"copy-link"),
    ("CLI info", r"\"info\""),
    ("CLI report", r"\"report\""),
    ("CLI report --explain-step", r"explain-step"),
    ("CLI diff", r"\"diff\""),
    ("trace health", r"health"),
    ("kernel classes", r"kernel_class|classify"),
    ("diff --fail-if gates", r"fail-if|fail_if"),
    ("diff --format md", r"\"md\""),
    ("JSON Schemas", r"schema"),
    ("CLI run", r"\"run\""),
    ("run: Open folder", r"folder-input"),
    ("run: ?run= manifest", r"\?run="),
    ("run: Run tab and heatmap click", r"run-heatmap"),
    ("run: ranks timeline", r"run-stack-ranks|run-stack-canvas"),
    ("run: collective across ranks", r"run-stack-collective"),
]


def files(prefix, suffix):
    if REV:
        out = subprocess.run(["git", "ls-tree", "-r", "--name-only", REV, prefix],
                             capture_output=True, text=True, check=True).stdout
        names = [n for n in out.split() if n.endswith(suffix)]
        return {n: subprocess.run(["git", "show", f"{REV}:{n}"], capture_output=True,
                                  text=True, check=True).stdout for n in names}
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", prefix],
                         capture_output=True, text=True, check=True).stdout
    return {n: open(n, encoding="utf-8").read() for n in out.split() if n.endswith(suffix)}


def blocks(text, start):
    """(first line, body) of each top-level block whose first line matches `start`."""
    lines = text.split("\n")
    heads = [i for i, l in enumerate(lines) if re.match(start, l)]
    return [(lines[i], "\n".join(lines[i:j])) for i, j in zip(heads, heads[1:] + [len(lines)])]


def e2e_counts():
    rows, independent, cli, tests = [], 0, 0, 0
    for name, text in sorted(files("e2e/tests", ".spec.js").items()):
        helpers = {}
        for head, body in blocks(text, r"(async )?function |test\(|const |module"):
            m = re.match(r"(?:async )?function (\w+)", head)
            if m:
                helpers[m.group(1)] = body
        for head, body in blocks(text, r"test\(|(async )?function |const |module"):
            if not head.startswith("test("):
                continue
            seen, todo, text_all = set(), [body], ""
            while todo:
                b = todo.pop()
                text_all += b
                for h, hb in helpers.items():
                    if h not in seen and re.search(rf"\b{h}\(", b):
                        seen.add(h)
                        todo.append(hb)
            ind, c = bool(INDEPENDENT.search(text_all)), bool(CLI.search(text_all))
            tests += 1
            independent += ind
            cli += c
            rows.append(f"  {name}: {head[:90]} independent={ind} cli={c}")
    return tests, independent, cli, rows


def untested_features():
    corpus = "".join(
        "".join(files(prefix, suffix).values())
        for prefix, suffix in [("e2e/tests", ".js"), ("e2e/pages", ".js"), ("worker/tests", ".rs")]
    )
    return [f for f, pattern in FEATURES if not re.search(pattern, corpus)]


def pinned_numbers():
    literal = re.compile(r"(?<![\w.#])\d[\d_]{2,}(\.\d+)?(?![\w])")
    found = []
    for name, text in sorted(files("worker/tests", ".rs").items()):
        for head, body in blocks(text, r"(pub )?(fn|const|static) |#\[test\]"):
            if not re.search(r"\breal\(|load_real|real_fixtures|\.json", body):
                continue
            depth = 0
            for line in body.split("\n"):
                # An assert, or a table of expected / pinned values, through its closing bracket.
                if depth == 0 and not re.search(r"assert|pinned|expected|const ", line):
                    continue
                depth = max(0, depth + sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}"))
                if literal.search(line) and "chars().count()" not in line:
                    found.append(f"  {name}: {line.strip()[:110]}")
    return found


def main():
    tests, independent, cli, rows = e2e_counts()
    print(f"e2e tests: {tests}; against independent numbers: {independent}; against the CLI: {cli}")
    print("\n".join(rows))
    missing = untested_features()
    print(f"README features: {len(FEATURES)}; with no test: {len(missing)}: {missing}")
    pins = pinned_numbers()
    print(f"pinned literal numbers (3+ digits) asserted on real traces: {len(pins)}")
    print("\n".join(pins))


if __name__ == "__main__":
    main()
