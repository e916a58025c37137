#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the library's layering from its object files.

usage: scripts/layers.py OBJDIR [--print]

OBJDIR holds the library's object files (a CMake build's
CMakeFiles/printk_objects.dir/src, one folder per layer). A file depends on
another when it uses a symbol the other defines (nm). The layers are the
folders of src/ and read bottom-up in the order of LAYERS (docs/design.md):
a file uses symbols and includes headers of its own layer and the layers
below it only, and the graph may hold no cycle at all (a weak reference
counts as a use); where a lower file must reach a higher one, it does so
through a table of function pointers the higher one fills (setup_hooks.h,
console_impl.h), which nm does not see. The base layer stays below the
formatters: the ring stores and reads bytes, and the expansion of deferred
records belongs to the layer that reads them (record_read.c), so the files
in BELOW_FORMATTING use none of FORMATTERS. Also checks that tools/
includes no private library header but src/readers/reader.h and
src/base/outbuf.h.
Exits 1 with one line per finding.
"""
import glob
import os
import re
import subprocess
import sys

# The folders of src/, bottom-up (docs/design.md, "Modules and layers").
LAYERS = ["base", "ring", "format", "log", "record", "console", "readers", "startup", "printk",
          "forward", "optional"]
# The tools' interface (reader.h) is declared in the readers' layer and
# implemented in several: a lower file includes it to check its definitions
# against the one declaration.
INTERFACE_HEADERS = {"readers/reader.h"}
# Files that must not depend, even through others, on the formatting layer.
BELOW_FORMATTING = {"ringbuffer"}
FORMATTERS = {"deferred", "vsprintf", "vsprintf_fp", "vsprintf_kernel", "textfmt", "kmsg_format"}
# Private headers of one module split in files: only its files include them.
MODULE_HEADERS = {"console_impl.h": {"console.c", "console_printer.c", "console_lossless.c",
                                      "console_register.c"}}

def objects(objdir):
    """(name, layer, path) of each object file: its layer is its folder."""
    out = []
    for obj in sorted(glob.glob(os.path.join(objdir, "**", "*.o"), recursive=True)):
        name = os.path.basename(obj)[:-2]
        if name.endswith(".c"):
            name = name[:-2]
        out.append((name, os.path.basename(os.path.dirname(obj)), obj))
    return out


def graph(objdir):
    defs, uses = {}, {}
    for name, _, obj in objects(objdir):
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBRCVW":
                defs.setdefault(f[2], name)
            elif len(f) == 2 and f[0] in "Uw":
                uses.setdefault(name, set()).add(f[1])
    g = {}
    for f, syms in uses.items():
        for s in syms:
            t = defs.get(s)
            if t and t != f:
                g.setdefault(f, {}).setdefault(t, []).append(s)
    return g


def cycles(g):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    nodes = set(g) | {t for e in g.values() for t in e}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def reaches(g, start):
    seen, todo = set(), [start]
    while todo:
        for t in g.get(todo.pop(), {}):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    objdir = sys.argv[1]
    objs = objects(objdir)
    if not objs:
        print(f"layers: no object files in {objdir}", file=sys.stderr)
        return 2
    layer = {name: lay for name, lay, _ in objs}
    for name, lay in sorted(layer.items()):
        if lay not in LAYERS:
            print(f"layers: {lay}/{name}.c is in no layer of scripts/layers.py's LAYERS", file=sys.stderr)
            return 2
    rank = {lay: i for i, lay in enumerate(LAYERS)}
    g = graph(objdir)
    if "--print" in sys.argv:
        for f in sorted(g):
            print(f, "->", ", ".join(f"{t}({len(s)})" for t, s in sorted(g[f].items())))
    bad = 0
    for comp in cycles(g):
        bad += 1
        edges = [f"{a}->{b} ({', '.join(sorted(g[a][b])[:3])})"
                 for a in sorted(comp) for b in sorted(comp) if b in g.get(a, {})]
        print("layers: dependency cycle among " + " ".join(sorted(comp)) + ": " + "; ".join(edges))
    for f in sorted(g):
        for t in sorted(g[f]):
            if rank[layer[t]] > rank[layer[f]]:
                bad += 1
                print(f"layers: {layer[f]}/{f}.c uses {layer[t]}/{t}.c ({', '.join(sorted(g[f][t])[:3])}), "
                      f"a higher layer")
    for f in sorted(BELOW_FORMATTING):
        for t in sorted(reaches(g, f) & FORMATTERS):
            bad += 1
            print(f"layers: {f}.c depends on the formatter {t}.c: the ring stores bytes, its readers format")
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for path in sorted(glob.glob(os.path.join(top, "src", "*", "*.[ch]"))):
        rel = os.path.relpath(path, os.path.join(top, "src"))
        own = os.path.dirname(rel)
        if own not in rank:
            bad += 1
            print(f"layers: src/{rel} is in no layer of LAYERS")
            continue
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc = m.group(1)
                hdr = os.path.basename(inc)
                if hdr in MODULE_HEADERS and os.path.basename(path) not in MODULE_HEADERS[hdr]:
                    bad += 1
                    print(f"layers: src/{rel}:{n} includes {hdr}, private to "
                          + ", ".join(sorted(MODULE_HEADERS[hdr])))
                lay = os.path.dirname(inc)
                if lay in rank and rank[lay] > rank[own] and inc not in INTERFACE_HEADERS:
                    bad += 1
                    print(f"layers: src/{rel}:{n} includes {inc}, a higher layer")
                elif not lay and os.path.exists(os.path.join(top, "src", hdr)) is False \
                        and glob.glob(os.path.join(top, "src", "*", hdr)):
                    bad += 1
                    print(f"layers: src/{rel}:{n} includes \"{inc}\" without its layer's folder")
    private = {os.path.basename(p) for p in glob.glob(os.path.join(top, "src", "*", "*.h"))}
    allowed = {"reader.h", "outbuf.h"}
    for path in sorted(glob.glob(os.path.join(top, "tools", "**", "*.[ch]"), recursive=True)):
        own = {os.path.basename(p) for p in glob.glob(os.path.join(os.path.dirname(path), "*.h"))}
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if m and m.group(1) in private and m.group(1) not in allowed | own:
                    bad += 1
                    print(f"layers: {os.path.relpath(path, top)}:{n} includes the library's private {m.group(1)}")
    if bad == 0:
        print(f"layers: {len(layer)} files in {len(set(layer.values()))} layers, each using only its own "
              "and lower layers, no cycle, the ring uses no formatter, "
              "tools use no private header but reader.h and outbuf.h")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
