#!/usr/bin/env python3
"""Recounts each step's phases from a trace's JSON, without our code (docs/definitions.md
"Phases"): per ProfilerStep#N, the CPU time of data loading, forward, backward and optimizer,
the GPU time of the device work each launched, and the communication kernels' time, all and
exposed (no other device work of the step running).

Rules, as written there: a unit of work is an op (`cpu_op` / `Operator`, not the step span) or
a DataLoader / `Optimizer.step#` / `Optimizer.zero_grad#` span (`user_annotation` or op); a
unit counts when no unit encloses it on its thread and it starts in a step's CPU span. Its
phase: DataLoader -> data loading; optimizer -> optimizer; a backward name
(`autograd::engine::evaluate_function`, `Backward`, `AccumulateGrad`), a thread other than the
steps' that runs backward names, or the target of a `fwdbwd` flow -> backward; else forward.
A device activity belongs to the step its runtime call (same `correlation`) starts in, and to
the phase of the call's outermost unit.

Usage: phases.py TRACE   prints {step: {cpu, gpu, comm, comm_exposed}} in ns as JSON."""

import collections
import json
import sys

from trace_json import load, ns

OPS = {"cpu_op", "Operator", "operator"}
ANNOTATIONS = {"user_annotation"}
CALLS = {"cuda_runtime", "cuda_driver", "Runtime", "runtime", "hip_runtime"}
DEVICE = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
COMM_PREFIX = ("nccl", "rccl", "gloo", "void nccl")
COMM_PARTS = ("multimem_", "cross_device_reduce", "one_shot_all_reduce", "two_shot_all_reduce",
              "allreduce_fusion_kernel", "deep_ep::", "pplx::", "nvshmem", "mscclpp", "quickreduce", "mori::")
PHASES = ("data_loading", "forward", "backward", "optimizer")


def is_backward(name):
    return name.startswith("autograd::engine::evaluate_function") or "Backward" in name or "AccumulateGrad" in name


def is_comm(name):
    return name.startswith(COMM_PREFIX) or any(p in name for p in COMM_PARTS)


def marker(e):
    """'data_loading' / 'optimizer' for such a span, else None."""
    name = e["name"]
    if "DataLoader" in name:
        return "data_loading"
    if name.startswith(("Optimizer.step#", "Optimizer.zero_grad#")):
        return "optimizer"
    return None


def is_unit(e):
    if e.get("cat") in OPS and not e["name"].startswith("ProfilerStep#"):
        return True
    return e.get("cat") in OPS | ANNOTATIONS and marker(e) is not None


def recount(path):
    events = [e for e in load(path) if isinstance(e, dict)]
    xs = [e for e in events if e.get("ph") == "X" and "dur" in e and "ts" in e]
    for e in xs:
        e["_s"], e["_e"] = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
    steps = {}
    for e in xs:
        if e.get("cat") in OPS | ANNOTATIONS and e["name"].startswith("ProfilerStep#"):
            steps[int(e["name"].split("#")[1])] = e
    spans = sorted((e["_s"], e["_e"], n) for n, e in steps.items())
    step_threads = {(e["pid"], e["tid"]) for e in steps.values()}

    def step_at(t):
        for s, end, n in spans:
            if s <= t < end:
                return n
        return None

    # The host events that nest (not Python frames, which the engine keeps in a layer of
    # their own), per thread: the outermost unit enclosing each.
    by_thread = collections.defaultdict(list)
    for e in xs:
        if e.get("cat") in OPS | ANNOTATIONS | CALLS:
            by_thread[(e["pid"], e["tid"])].append(e)
    engine_threads = {t for t, evs in by_thread.items() if t not in step_threads and any(is_backward(e["name"]) for e in evs)}
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e["_s"], -e["_e"]))
        stack = []
        for e in evs:
            while stack and not (e["_s"] >= stack[-1]["_s"] and e["_e"] <= stack[-1]["_e"]):
                stack.pop()
            outer = next((a for a in stack if is_unit(a)), None)
            e["_outer"] = outer if outer is not None else (e if is_unit(e) else None)
            stack.append(e)

    # fwdbwd flow targets: the enclosing slice for `bp: e`, else the next starting at or after.
    targets = set()
    for f in events:
        if f.get("ph") == "f" and f.get("cat") == "fwdbwd":
            t, key = ns(f["ts"]), (f.get("pid"), f.get("tid"))
            evs = by_thread.get(key, [])
            if f.get("bp") == "e":
                inside = [e for e in evs if e["_s"] <= t <= e["_e"]]
                hit = max(inside, key=lambda e: e["_s"]) if inside else None
            else:
                after = [e for e in evs if e["_s"] >= t]
                hit = min(after, key=lambda e: (e["_s"], -e["_e"])) if after else None
            if hit is not None:
                targets.add(id(hit))

    def phase(unit, thread):
        m = marker(unit)
        if m:
            return m
        if is_backward(unit["name"]) or thread in engine_threads or id(unit) in targets:
            return "backward"
        return "forward"

    out = {n: {"cpu": dict.fromkeys(PHASES, 0), "gpu": dict.fromkeys(PHASES, 0), "comm": 0, "comm_exposed": 0} for n in steps}
    calls = {}
    for thread, evs in by_thread.items():
        for e in evs:
            if e["_outer"] is e:
                n = step_at(e["_s"])
                if n is not None:
                    out[n]["cpu"][phase(e, thread)] += e["_e"] - e["_s"]
            if e.get("cat") in CALLS and "correlation" in e.get("args", {}):
                calls[e["args"]["correlation"]] = (e, thread)
    intervals = collections.defaultdict(lambda: ([], []))
    for e in xs:
        if e.get("cat") not in DEVICE:
            continue
        call = calls.get(e.get("args", {}).get("correlation"))
        if call is None:
            continue
        n = step_at(call[0]["_s"])
        if n is None:
            continue
        if is_comm(e["name"]):
            out[n]["comm"] += e["_e"] - e["_s"]
            intervals[n][0].append((e["_s"], e["_e"]))
        else:
            unit = call[0]["_outer"]
            out[n]["gpu"][phase(unit, call[1]) if unit is not None else "forward"] += e["_e"] - e["_s"]
            intervals[n][1].append((e["_s"], e["_e"]))
    for n, (comm, other) in intervals.items():
        comm, other = union(comm), union(other)
        out[n]["comm_exposed"] = sum(b - a for a, b in comm) - sum(
            max(0, min(b, d) - max(a, c)) for a, b in comm for c, d in other)
    return out


def union(v):
    out = []
    for a, b in sorted(v):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


if __name__ == "__main__":
    print(json.dumps(recount(sys.argv[1]), indent=1, sort_keys=True))
