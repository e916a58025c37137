# SPDX-License-Identifier: MIT
"""Test set-up: the package from this tree, the library from the build.

PRINTK_LIBRARY must name a built libprintk.so.0 (scripts/test.sh sets it
to the gcc build's). Logs are written by child processes (logwriter.py)
through the library's public writer calls, so the reader under test never
shares a process with a writer of the same file.
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def pytest_configure(config):
    lib = os.environ.get("PRINTK_LIBRARY")
    if not lib or not os.path.exists(lib):
        raise pytest.UsageError("set PRINTK_LIBRARY to a built libprintk.so.0 (now: %r)" % lib)


def run_writer(path, records=(), size=4096, open_line=None, delay=0.0, gap=0.0):
    """Write @records (dicts: text, level, facility, dict) to the log file
    @path from a child process; @open_line: then print that text without a
    newline through printk into the same file and die by SIGKILL. Returns
    what the child reported (its pid, tid, the log's first and next seq)."""
    job = {"path": str(path), "size": size, "records": list(records), "open_line": open_line,
           "delay": delay, "gap": gap}
    p = subprocess.run([sys.executable, os.path.join(HERE, "logwriter.py")],
                       input=json.dumps(job), capture_output=True, text=True, timeout=60)
    if open_line is None:
        assert p.returncode == 0, p.stderr
    else:
        assert p.returncode == -9, (p.returncode, p.stderr)
    return json.loads(p.stdout.splitlines()[0])


def start_writer(path, records, size=4096, delay=0.0, gap=0.0):
    """run_writer() in the background: the Popen, its job on stdin."""
    job = {"path": str(path), "size": size, "records": list(records), "open_line": None,
           "delay": delay, "gap": gap}
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "logwriter.py")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    p.stdin.write(json.dumps(job))
    p.stdin.close()
    return p
