#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the library's layering from its object files.

usage: scripts/layers.py OBJDIR [--print]

OBJDIR holds the library's object files (a CMake build's
CMakeFiles/printk_objects.dir/src). A file depends on another when it uses
a symbol the other defines (nm). The layers read bottom-up
(docs/design.md): the graph may hold no cycle at all (a weak reference
counts as a use); where a lower file must reach a higher one, it does so
through a table of function pointers the higher one fills (setup_hooks.h,
console_impl.h), which nm does not see. The base layer stays below the
formatters: the ring stores and reads bytes, and the expansion of deferred
records belongs to the layer that reads them (record_read.c), so the files
in BELOW_FORMATTING use none of FORMATTERS. Also checks that tools/
includes no private library header but src/reader.h and src/outbuf.h.
Exits 1 with one line per finding.
"""
import glob
import os
import re
import subprocess
import sys

# Files that must not depend, even through others, on the formatting layer.
BELOW_FORMATTING = {"ringbuffer"}
FORMATTERS = {"deferred", "vsprintf", "vsprintf_fp", "vsprintf_kernel", "textfmt", "kmsg_format"}
# Private headers of one module split in files: only its files include them.
MODULE_HEADERS = {"console_impl.h": {"console.c", "console_printer.c", "console_lossless.c",
                                      "console_register.c"}}

def graph(objdir):
    defs, uses = {}, {}
    for obj in sorted(glob.glob(os.path.join(objdir, "*.o"))):
        name = os.path.basename(obj)[:-2]
        if name.endswith(".c"):
            name = name[:-2]
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
    if not glob.glob(os.path.join(objdir, "*.o")):
        print(f"layers: no object files in {objdir}", file=sys.stderr)
        return 2
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
    for f in sorted(BELOW_FORMATTING):
        for t in sorted(reaches(g, f) & FORMATTERS):
            bad += 1
            print(f"layers: {f}.c depends on the formatter {t}.c: the ring stores bytes, its readers format")
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for path in sorted(glob.glob(os.path.join(top, "src", "*.[ch]"))):
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                name = os.path.basename(path)
                if m and m.group(1) in MODULE_HEADERS and name not in MODULE_HEADERS[m.group(1)]:
                    bad += 1
                    print(f"layers: src/{name}:{n} includes {m.group(1)}, private to "
                          + ", ".join(sorted(MODULE_HEADERS[m.group(1)])))
    private = {os.path.basename(p) for p in glob.glob(os.path.join(top, "src", "*.h"))}
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
        print(f"layers: {len(g)} files, no cycle, the ring uses no formatter, "
              "tools use no private header but reader.h and outbuf.h")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
