#!/usr/bin/env python3
"""NCCL kernels of a trace recounted from its JSON (stdlib only): how many `kernel` events whose
name starts with `ncclKernel_<Collective>` run on each stream (tid), by collective.

Usage: scripts/check/nccl_counts.py TRACE.json[.gz]...   (one line per file, collective, stream)
Backs the collective counts in worker/tests/run.rs (`dlrm_ranks_open_as_one_run_with_their_own_numbers`:
5 SendRecv and 3 AllReduce per rank on stream 84; `hta_two_ranks_of_128_are_one_run`: 8 SendRecv
on stream 84 and 2 on stream 203 per rank).
"""
import collections
import re
import sys

from trace_json import load


def recount(path):
    """Counter of (collective, stream tid as text) -> NCCL kernels: what `main` prints."""
    counts = collections.Counter()
    for e in load(path):
        m = re.match(r"ncclKernel_([A-Za-z]+)", e.get("name", ""))
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() == "kernel" and m:
            counts[(m.group(1), str(e.get("tid")))] += 1
    return counts


def main(paths):
    for path in paths:
        counts = recount(path)
        for (collective, stream), n in sorted(counts.items()):
            print(path.rsplit("/", 1)[-1], collective, f"stream {stream}", n, sep="\t")


if __name__ == "__main__":
    main(sys.argv[1:])
