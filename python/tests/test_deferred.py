# SPDX-License-Identifier: MIT
"""Deferred records (docs/deferred.md) read by the Python reader: a child
process stores the same messages through pk_printk_lit() (deferred: no
console prints their level) and pk_printk() (formatted at once); the
reader, in this process, gets the same text for both."""
import os
import subprocess
import sys

import printk

CHILD = r"""
import ctypes, os, sys
os.environ["PRINTK_OPTS"] = "log_buf_file=%s console=none loglevel=1" % sys.argv[1]
lib = ctypes.CDLL(os.environ["PRINTK_LIBRARY"])
# The literals: alive, at one address, for the life of the process.
FMTS = [b"\x016worker %d processed %s in %lu us\n",
        b"\x017%5.2f|%-6s|%x|%c\n",
        b"\x015no arguments\n"]
ARGS = [(ctypes.c_int(3), ctypes.c_char_p(b"job"), ctypes.c_ulong(42)),
        (ctypes.c_double(2.5), ctypes.c_char_p(b"ab"), ctypes.c_uint(0xbeef), ctypes.c_int(65)),
        ()]
out = []
for fmt, args in zip(FMTS, ARGS):
    out.append(lib.pk_printk_lit(fmt, *args))
    out.append(lib.pk_printk(fmt, *args))
print(" ".join(str(x) for x in out))
"""


def test_deferred_records_read_as_text(tmp_path):
    log = tmp_path / "d.log"
    p = subprocess.run([sys.executable, "-c", CHILD, str(log)], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    ret = [int(x) for x in p.stdout.split()]
    texts = ["worker 3 processed job in 42 us", " 2.50|ab    |beef|A", "no arguments"]
    # A deferred call returns the bytes of its record (reference and
    # arguments), an eager one the text's length.
    assert ret == [8 + 4 + 2 + 3 + 8, len(texts[0]), 8 + 8 + 2 + 2 + 4 + 4, len(texts[1]),
                   8, len(texts[2])]
    got = list(printk.open(log))
    assert [r.text for r in got] == [t for t in texts for _ in (0, 1)]
    assert [r.level for r in got] == [6, 6, 7, 7, 5, 5]
    assert all(r.flags == printk.REC_NEWLINE for r in got)
