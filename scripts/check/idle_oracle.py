#!/usr/bin/env python3
"""HTA-definition idle time per GPU stream, recounted from a trace's JSON (stdlib only).

Definitions: ../shared/REFERENCE.md section 4 (HTA). Per stream (pid, tid) the device activities
(`kernel`, `gpu_memcpy`, `gpu_memset`) sorted by start; a gap is the time from the latest end so
far to the next start. Host wait: the activity's launch call (same `correlation`, category
`cuda_runtime` / `cuda_driver`) started after that end; kernel wait: otherwise when the gap is
under 30 us; other: the rest. Busy: the union of the activities. Launches: kernels with a launch
call; delay = kernel start - launch end, clipped at 0, outlier over 100 us; short: kernel shorter
than its launch call. Times are rounded to whole ns first, as the engine stores them.

Usage: scripts/check/idle_oracle.py TRACE.json[.gz]   (one JSON line per stream, then launches)
Backs worker/tests/idle.rs (`idle_matches_the_hta_definition_recounted_from_the_json`).
"""
import collections
import json
import sys

from trace_json import load, ns

# Categories compared lowercased: 2020 traces say `Kernel`, `Memcpy`, `Memset`, `Runtime`.
DEVICE = ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset")
LAUNCH = ("cuda_runtime", "cuda_driver", "runtime")


def recount(path):
    """Per stream `{stream: [pid, tid], activities, busy_ns, host_wait, kernel_wait, other}`
    (idle in ns), then `{launches, delay_outliers, short_kernels}`: what `main` prints."""
    rows = []
    events = [e for e in load(path) if e.get("ph") == "X"]
    for e in events:
        e["cat"] = str(e.get("cat", "")).lower()
    launch = {e["args"]["correlation"]: e for e in events
              if e.get("cat") in LAUNCH and "correlation" in e.get("args", {})}
    streams = collections.defaultdict(list)
    for e in events:
        if e.get("cat") in DEVICE:
            streams[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e))
    for key, acts in sorted(streams.items(), key=lambda kv: str(kv[0])):
        acts.sort(key=lambda a: a[0])
        idle = {"host_wait": 0, "kernel_wait": 0, "other": 0}
        busy, first, end = 0, acts[0][0], acts[0][1]
        for start, stop, e in acts[1:]:
            if start > end:
                gap = start - end
                call = launch.get(e.get("args", {}).get("correlation"))
                if call is not None and ns(call["ts"]) > end:
                    idle["host_wait"] += gap
                elif gap < 30_000:
                    idle["kernel_wait"] += gap
                else:
                    idle["other"] += gap
                busy += end - first
                first = start
            end = max(end, stop)
        busy += end - first
        rows.append({"stream": list(key), "activities": len(acts), "busy_ns": busy, **idle})
    linked = [(e, launch[e["args"]["correlation"]]) for e in events
              if e.get("cat") == "kernel" and e.get("args", {}).get("correlation") in launch]
    delays = [max(0, ns(k["ts"]) - ns(c["ts"]) - ns(c["dur"])) for k, c in linked]
    rows.append({"launches": len(linked),
                 "delay_outliers": sum(d > 100_000 for d in delays),
                 "short_kernels": sum(ns(k["dur"]) < ns(c["dur"]) for k, c in linked)})
    return rows


def main(path):
    for row in recount(path):
        print(json.dumps(row))


if __name__ == "__main__":
    main(sys.argv[1])
