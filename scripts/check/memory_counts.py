#!/usr/bin/env python3
"""Memory events of a trace recounted from its JSON (stdlib only).

Per (Device Type, Device Id) of the `[memory]` instant events: how many, how many with positive
`Bytes` (allocations) and negative (frees), the largest `Total Allocated` and `Total Reserved`.
Device Type 0 is the CPU (`cpu`), 1 CUDA (`cuda:N`), 6 HIP (`hip:N`), as PyTorch's DeviceType enum numbers them.

Usage: scripts/check/memory_counts.py TRACE.json[.gz]   (one line per device)
Backs the expected rows of worker/tests/memory.rs (`real_traces_peaks_and_counts`).
"""
import collections
import sys

from trace_json import load


def recount(path):
    """{device label: [events, allocations (Bytes > 0), frees (Bytes < 0), max Total Allocated,
    max Total Reserved]}: what `main` prints."""
    rows = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
    for e in load(path):
        if e.get("name") != "[memory]":
            continue
        a = e.get("args", {})
        kind = a.get("Device Type")
        names = {1: "cuda", 6: "hip"}
        label = "cpu" if kind == 0 else f"{names.get(kind, f'type{kind}')}:{a.get('Device Id')}"
        r = rows[label]
        r[0] += 1
        r[1] += a.get("Bytes", 0) > 0
        r[2] += a.get("Bytes", 0) < 0
        r[3] = max(r[3], a.get("Total Allocated", 0))
        r[4] = max(r[4], a.get("Total Reserved", 0))
    return dict(rows)


def main(path):
    rows = recount(path)
    for label in sorted(rows):
        print(label, *rows[label], sep="\t")


if __name__ == "__main__":
    main(sys.argv[1])
