#!/usr/bin/env python3
"""The import graph of each Rust crate in the repository (stdlib only): module -> modules it uses,
its line count, and the circles among them. Exit status 1 if there is a circle.

A module is a file (`a/mod.rs` is `a`, `a/b.rs` is `a::b`). A use of `crate::x::y::Item`,
`super::Item` or `self::x::Item` (in a `use` tree or inline in code, outside `#[cfg(test)]`
modules) is an edge to the longest module path it names. A circle is a set of files that reach
each other by those edges; a module using its own ancestor or descendant (`report::html` using
`report`'s items, `report` re-exporting `report::html`) is structure, not an edge.

`--layers` also prints the stricter view, for information: each edge lifted to the two children
of the modules' closest common ancestor (`finding::x` -> `session::y` counts as `finding` ->
`session`), so a circle there means a module's submodules are not a DAG.

Usage: scripts/check/imports.py [--graph] [--layers]   (--graph: every module's uses and lines)
"""
import collections
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# (crate name, root file): the library, the two binaries (their own crates), the app.
CRATES = [
    ("kinetoscope", "worker/src/lib.rs"),
    ("kinetoscope (bin kinetoscope)", "worker/src/bin/kinetoscope.rs"),
    ("kinetoscope (bin worker)", "worker/src/bin/worker.rs"),
    ("kinetoscope-protocol", "worker/protocol/src/lib.rs"),
    ("kinetoscope-app", "app/src/main.rs"),
]

MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")
USE = re.compile(r"\buse\s+([^;]+);")
INLINE = re.compile(r"\b((?:crate|super|self)(?:\s*::\s*(?:super|\w+))+)")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def strip_tests(text):
    """The text without `#[cfg(test)] mod x { ... }` blocks (matched by brace depth)."""
    out, pos = [], 0
    for m in TEST_MOD.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.start()])
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        pos = i
    out.append(text[pos:])
    return "".join(out)


def use_paths(tree, prefix=""):
    """Every full path of a `use` tree (`a::{b, c::{d as e}}` -> a::b, a::c::d)."""
    tree = re.sub(r"\s+", "", tree)
    if "{" not in tree:
        return [prefix + re.sub(r"as\w+$", "", tree.split(" as ")[0])] if tree else []
    head, _, rest = tree.partition("{")
    body = rest[: rest.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    parts.append(cur)
    paths = []
    for part in parts:
        if part in ("self", ""):
            paths.append(prefix + head.rstrip(":"))
        else:
            paths.extend(use_paths(part, prefix + head))
    return paths


def modules_of(root):
    """{module path (tuple): file} of the crate whose root file is `root`."""
    found = {(): root}
    todo = [((), root)]
    while todo:
        path, file = todo.pop()
        text = COMMENT.sub("", open(os.path.join(REPO, file), encoding="utf-8").read())
        base = os.path.dirname(file)
        stem = os.path.splitext(os.path.basename(file))[0]
        # Children live beside mod.rs / lib.rs / main.rs, else in a folder named after the file
        # (the binaries' roots point there with #[path]).
        dirs = [base] if stem in ("mod", "lib", "main") else [os.path.join(base, stem)] + ([base] if file == root else [])
        for name in MOD_DECL.findall(strip_tests(re.sub(r"#\[path\s*=[^\]]*\]\s*", "", text))):
            for cand in [c for d in dirs for c in (os.path.join(d, name + ".rs"), os.path.join(d, name, "mod.rs"))]:
                if os.path.exists(os.path.join(REPO, cand)):
                    found[path + (name,)] = cand
                    todo.append((path + (name,), cand))
                    break
    return found


def resolve(raw, here, modules):
    """The longest module named by the path `raw` used in module `here`, or None (external)."""
    segs = [s for s in re.split(r"\s*::\s*", raw.strip()) if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = here
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    else:
        return None
    path = base
    for s in segs:
        if path + (s,) in modules:
            path = path + (s,)
        else:
            break
    return path


def graph(modules):
    """{module: set of modules it uses}, {module: lines}."""
    uses, lines = {}, {}
    for mod, file in modules.items():
        raw = open(os.path.join(REPO, file), encoding="utf-8").read()
        lines[mod] = raw.count("\n")
        text = strip_tests(STRING.sub('""', COMMENT.sub("", raw)))
        paths = [p for tree in USE.findall(text) for p in use_paths(tree)]
        paths += INLINE.findall(USE.sub("", text))
        targets = set()
        for p in paths:
            t = resolve(p, mod, modules)
            if t is not None and t != mod:
                targets.add(t)
        uses[mod] = targets
    return uses, lines


def circles(uses, layered=False):
    """Every circle, as the sorted list of its modules (Tarjan's SCCs per layer)."""
    layer = collections.defaultdict(lambda: collections.defaultdict(set))
    for a, targets in uses.items():
        for b in targets:
            n = 0
            while n < min(len(a), len(b)) and a[n] == b[n]:
                n += 1
            if n == len(a) or n == len(b):
                continue  # one holds the other
            if layered:
                layer[a[:n]][a[: n + 1]].add(b[: n + 1])
            else:
                layer[()][a].add(b)
    found = []
    for edges in layer.values():
        index, low, stack, on, counter = {}, {}, [], set(), [0]

        def visit(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in edges.get(v, ()):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))

        for v in list(edges):
            if v not in index:
                visit(v)
    return found


def name(mod):
    return "::".join(mod) or "(root)"


def main():
    show = "--graph" in sys.argv[1:]
    layers = "--layers" in sys.argv[1:]
    total = 0
    for crate, root in CRATES:
        modules = modules_of(root)
        uses, lines = graph(modules)
        found = circles(uses)
        total += len(found)
        print(f"{crate}: {len(modules)} modules, {sum(lines.values())} lines, {len(found)} circles")
        if show:
            for mod in sorted(modules):
                used = ", ".join(sorted(name(t) for t in uses[mod])) or "-"
                print(f"  {name(mod):40} {lines[mod]:5}  -> {used}")
        for comp in found:
            print("  circle: " + " <-> ".join(name(m) for m in comp))
            for a in comp:
                print(f"    {name(a)} -> " + ", ".join(name(b) for b in comp if b in uses[a]))
        if layers:
            for comp in circles(uses, layered=True):
                print("  (layers) " + " <-> ".join(name(m) for m in comp))
    print(f"{total} circles")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
