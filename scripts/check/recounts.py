#!/usr/bin/env python3
"""The recounts of scripts/check run as tests (stdlib only): each recount's numbers, computed from
the real fixtures' JSON without our code, against the engine's (the CLI's `report
--json`, the e2e oracle) or, for findings_table.py, against the notes of worker/tests/findings.rs.

One line per check, `ok NAME: what was compared` or `FAILED NAME: the first differences`, then
`N passed, M failed` (scripts/test adds each check to its count). Exit status 1 if any failed.
  findings_table  findings_table.py: every number quoted in FIXTURE_RULES' notes recomputed (exit
                  status 0, no DIFF row, at least one OK row)
  idle_oracle     idle_oracle.py on every real fixture: per GPU stream busy, host wait, kernel
                  wait and other idle, and activities; launches, delay outliers and short kernels
                  (`report --json` `idle`, `launch`)
  memory_counts   memory_counts.py on every real fixture: per device events, allocations, frees,
                  peak allocated and reserved (`report --json` `memory`)
  nccl_counts     nccl_counts.py on every real fixture: NCCL kernels per collective (the kernel
                  table's calls of `ncclKernel_<Collective>` names, `report --json` `kernels`)
  phases          phases.py on every real fixture with steps: per step, CPU and GPU time of data
                  loading, forward, backward and optimizer, communication all and exposed
                  (`report --json` `phases`)

Usage: scripts/check/recounts.py [CHECK...]   (default: all; the CLI: $KINETOSCOPE_CLI, else
target/debug/kinetoscope; fixtures: $KINETOSCOPE_SHARED/fixtures/real, else ../shared)
"""
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import idle_oracle  # noqa: E402
import memory_counts  # noqa: E402
import nccl_counts  # noqa: E402
import phases  # noqa: E402

SHARED = os.environ.get("KINETOSCOPE_SHARED") or os.path.join(REPO, "..", "shared")
REAL = os.path.join(SHARED, "fixtures", "real")
CLI = os.environ.get("KINETOSCOPE_CLI") or os.path.join(REPO, "target", "debug", "kinetoscope")


# Not JSON that Python's json reads: a bare array cut short, as the trace format allows (the
# engine reads it; SOURCES.tsv says TRUNCATED).
TRUNCATED = {"speedscope__simple-partial.json"}


def fixtures():
    names = sorted(n for n in os.listdir(REAL) if n.endswith((".json", ".json.gz")) and n not in TRUNCATED)
    if not names:
        raise SystemExit(f"no fixtures in {REAL}")
    return [os.path.join(REAL, n) for n in names]


_reports = {}


def report(path):
    """`kinetoscope report --json PATH`, parsed (once per file)."""
    if path not in _reports:
        out = subprocess.run([CLI, "report", "--json", path], check=True, capture_output=True).stdout
        _reports[path] = json.loads(out)
    return _reports[path]


def us_to_ns(us):
    return round(us * 1000)


def stream_key(tid):
    """A stream's tid as text without the `stream ` the engine's label (and some traces' tids)
    begin with: `7`, `stream 7`, `stream stream 7` are stream 7."""
    text = str(tid)
    while text.startswith("stream "):
        text = text[len("stream "):]
    return text


def check_idle():
    diffs, streams, files = [], 0, 0
    for path in fixtures():
        name = os.path.basename(path)
        rows = idle_oracle.recount(path)
        *per_stream, launches = rows
        cli = report(path)
        ours = {}
        for s in cli["idle"]:
            ours[stream_key(s["stream"])] = s
        files += bool(per_stream)
        for r in per_stream:
            streams += 1
            tid = stream_key(r["stream"][1])
            s = ours.pop(tid, None)
            if s is None:
                diffs.append(f"{name} stream {tid}: not in report --json idle")
                continue
            want = {"busy": r["busy_ns"], "host_wait": r["host_wait"], "kernel_wait": r["kernel_wait"],
                    "other": r["other"], "activities": r["activities"]}
            got = {"busy": us_to_ns(s["busy_us"]), "host_wait": us_to_ns(s["host_wait_us"]),
                   "kernel_wait": us_to_ns(s["kernel_wait_us"]), "other": us_to_ns(s["other_us"]),
                   "activities": s["kernels"]}
            for key in want:
                if want[key] != got[key]:
                    diffs.append(f"{name} stream {tid} {key}: recounted {want[key]}, engine {got[key]}")
        for tid in ours:
            diffs.append(f"{name} stream {tid}: in report --json idle, not recounted")
        launch = cli["launch"]
        for key, theirs in (("launches", "kernels"), ("delay_outliers", "delay_outliers"),
                            ("short_kernels", "short_kernels")):
            if launches[key] != (launch or {}).get(theirs, 0):
                diffs.append(f"{name} {key}: recounted {launches[key]}, engine {(launch or {}).get(theirs)}")
    return diffs, f"{streams} GPU streams of {files} fixtures with device activity, and their launches"


def check_memory():
    diffs, devices = [], 0
    for path in fixtures():
        name = os.path.basename(path)
        rows = memory_counts.recount(path)
        ours = {m["device"]: m for m in report(path)["memory"]}
        for label, (events, allocs, frees, peak_alloc, peak_res) in sorted(rows.items()):
            devices += 1
            m = ours.pop(label, None)
            if m is None:
                diffs.append(f"{name} {label}: not in report --json memory ({sorted(ours)})")
                continue
            got = (m["events"], m["allocations"], m["frees"], m["peak_allocated_bytes"], m["peak_reserved_bytes"])
            if got != (events, allocs, frees, peak_alloc, peak_res):
                diffs.append(f"{name} {label}: recounted {(events, allocs, frees, peak_alloc, peak_res)}, engine {got}")
        for label in ours:
            diffs.append(f"{name} {label}: in report --json memory, not recounted")
    return diffs, f"{devices} memory devices"


def check_nccl():
    diffs, kernels = [], 0
    for path in fixtures():
        name = os.path.basename(path)
        want = collections.Counter()
        for (collective, _stream), n in nccl_counts.recount(path).items():
            want[collective] += n
        got = collections.Counter()
        for k in report(path)["kernels"]:
            m = re.match(r"ncclKernel_([A-Za-z]+)", k["name"])
            if m:
                got[m.group(1)] += k["calls"]
        kernels += sum(want.values())
        if want != got:
            diffs.append(f"{name}: recounted {dict(want)}, engine {dict(got)}")
    return diffs, f"{kernels} NCCL kernels"


def check_phases():
    diffs, steps = [], 0
    for path in fixtures():
        name = os.path.basename(path)
        want = phases.recount(path)
        for row in report(path)["phases"]["steps"]:
            n = row["step"]
            steps += 1
            if n not in want:
                diffs.append(f"{name} step {n}: not recounted")
                continue
            got = {
                "cpu": {k: us_to_ns(v) for k, v in row["cpu_us"].items()},
                "gpu": {k: us_to_ns(v) for k, v in row["gpu_us"].items()},
                "comm": us_to_ns(row["communication_us"]),
                "comm_exposed": us_to_ns(row["communication_exposed_us"]),
            }
            if got != want[n]:
                diffs.append(f"{name} step {n}: recounted {want[n]}, engine {got}")
    if steps == 0:
        diffs.append("no step recounted")
    return diffs, f"{steps} steps' phases"


def check_findings_table():
    run = subprocess.run([sys.executable, os.path.join(HERE, "findings_table.py")],
                         capture_output=True, text=True)
    lines = run.stdout.splitlines()
    bad = [line for line in lines if line.startswith("DIFF")]
    ok = sum(line.startswith("OK") for line in lines)
    diffs = bad[:]
    if run.returncode != 0:
        diffs.append(f"findings_table.py exited {run.returncode}: {run.stderr.strip()[-500:]}")
    if ok == 0:
        diffs.append("findings_table.py checked no note")
    summary = lines[-1] if lines else ""
    return diffs, summary


CHECKS = {
    "findings_table": check_findings_table,
    "idle_oracle": check_idle,
    "memory_counts": check_memory,
    "nccl_counts": check_nccl,
    "phases": check_phases,
}


def main(names):
    passed = failed = 0
    for name in names or CHECKS:
        try:
            diffs, what = CHECKS[name]()
        except Exception as e:  # a recount or the CLI that cannot run fails its check
            diffs, what = [f"{type(e).__name__}: {e}"], ""
        if diffs:
            failed += 1
            print(f"FAILED {name}: {len(diffs)} differences")
            for d in diffs[:20]:
                print(f"    {d}")
        else:
            passed += 1
            print(f"ok {name}: {what}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
