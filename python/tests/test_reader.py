# SPDX-License-Identifier: MIT
"""printk.open(): records and their fields, the end of plain iteration,
follow with a timeout, lost records, a killed writer's open line, errors,
read-only access, and the struct layout against the C headers."""
import errno
import hashlib
import os
import shutil
import subprocess
import sys
import time

import pytest

import printk
from conftest import run_writer, start_writer

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def recs(n, prefix="r"):
    return [{"text": "%s%d" % (prefix, i)} for i in range(n)]


def test_fields(tmp_path):
    log = tmp_path / "a.log"
    w = run_writer(log, [
        {"text": "hello", "level": 6, "facility": 1},
        {"text": "disk sda failed", "level": 3, "facility": 0,
         "dict": ["SUBSYSTEM=block", "DEVICE=b8:0"]},
        {"text": "caf\u00e9 \udcff", "level": 7, "facility": 23},
    ])
    got = list(printk.open(log))
    assert [r.seq for r in got] == [0, 1, 2]
    assert [(r.level, r.facility) for r in got] == [(6, 1), (3, 0), (7, 23)]
    assert [r.text for r in got] == ["hello", "disk sda failed", "caf\u00e9 \\xff"]
    assert got[2].text_bytes == b"caf\xc3\xa9 \xff"
    assert [r.dict for r in got] == [{}, {"SUBSYSTEM": "block", "DEVICE": "b8:0"}, {}]
    assert list(got[1].dict) == ["SUBSYSTEM", "DEVICE"]
    for r in got:
        assert r.flags == printk.REC_NEWLINE
        assert (r.pid, r.tid, r.caller) == (w["pid"], w["tid"], "T%d" % w["tid"])
        assert r.lost == 0 and not r.partial
    assert 0 < got[0].ts_nsec <= got[1].ts_nsec <= got[2].ts_nsec


def test_plain_iteration_stops_at_newest_and_resumes(tmp_path):
    log = tmp_path / "a.log"
    run_writer(log, recs(3))
    with printk.open(log) as r:
        assert [x.text for x in r] == ["r0", "r1", "r2"]
        assert list(r) == []
        run_writer(log, recs(2, "s"))
        assert [(x.seq, x.text) for x in r] == [(3, "s0"), (4, "s1")]
        assert r.lost == 0


def test_lost_records_counted_exactly(tmp_path):
    log = tmp_path / "a.log"
    run_writer(log, recs(1))
    r = printk.open(log)
    first = next(r)
    assert (first.seq, first.lost) == (0, 0)
    # 600 records of 40 bytes do not fit a 4 KiB text area.
    w = run_writer(log, [{"text": "x%039d" % i} for i in range(600)])
    assert w["first_seq"] > 1 and w["next_seq"] == 601
    rest = list(r)
    assert rest[0].seq == w["first_seq"]
    assert rest[0].lost == w["first_seq"] - 1
    assert all(x.lost == 0 for x in rest[1:])
    assert [x.seq for x in rest] == list(range(w["first_seq"], 601))
    assert r.lost == w["first_seq"] - 1
    assert rest[-1].text == "x%039d" % 599
    r.close()


def test_follow_waits_for_new_records_then_times_out(tmp_path):
    log = tmp_path / "a.log"
    run_writer(log, recs(1))
    p = start_writer(log, recs(3, "late"), delay=0.3, gap=0.1)
    t0 = time.monotonic()
    with printk.open(log, follow=True, timeout=1.5) as r:
        got = [x.text for x in r]
    elapsed = time.monotonic() - t0
    assert p.wait(timeout=30) == 0
    assert got == ["r0", "late0", "late1", "late2"]
    # The last record came after about 0.5 s, and 1.5 s of quiet followed.
    assert 1.9 <= elapsed < 10


def test_follow_timeout_on_a_quiet_log(tmp_path):
    log = tmp_path / "a.log"
    run_writer(log, recs(2))
    r = printk.open(log, follow=True, timeout=0.2)
    assert [x.seq for x in r] == [0, 1]
    t0 = time.monotonic()
    assert list(r) == []
    assert 0.2 <= time.monotonic() - t0 < 5


def test_killed_writer_open_line(tmp_path):
    log = tmp_path / "a.log"
    run_writer(log, recs(2))
    run_writer(log, open_line="last words")
    assert [x.text for x in printk.open(log)] == ["r0", "r1"]
    got = list(printk.open(log, partial=True))
    assert [x.text for x in got] == ["r0", "r1", "last words"]
    assert [x.partial for x in got] == [False, False, True]
    assert got[2].flags & printk.REC_NEWLINE == 0


def test_reading_never_writes(tmp_path):
    log = tmp_path / "a.log"
    run_writer(log, recs(5))
    os.chmod(log, 0o400)
    before = (hashlib.sha256(log.read_bytes()).hexdigest(), os.stat(log).st_mtime_ns)
    assert len(list(printk.open(log))) == 5
    assert len(list(printk.open(log, partial=True))) == 5
    assert (hashlib.sha256(log.read_bytes()).hexdigest(), os.stat(log).st_mtime_ns) == before


def test_printk_opts_do_not_make_the_reader_a_writer(tmp_path):
    """PRINTK_OPTS=log_buf_file= in the reader's environment (as udmesg's
    default log) neither creates that file nor opens it for writing."""
    log = tmp_path / "a.log"
    run_writer(log, recs(2))
    other = tmp_path / "other.log"
    code = ("import os, printk; print([r.text for r in printk.open(%r)]); "
            "print(os.environ['PRINTK_OPTS'])" % str(log))
    env = dict(os.environ, PRINTK_OPTS="log_buf_file=%s console=stderr" % other,
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["['r0', 'r1']", "log_buf_file=%s console=stderr" % other]
    assert not other.exists()


def test_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        printk.open(tmp_path / "missing.log")
    other = tmp_path / "other"
    other.write_bytes(b"not a log\n" * 1000)
    with pytest.raises(OSError) as e:
        printk.open(other)
    assert e.value.errno == errno.EPROTO
    with pytest.raises(ValueError):
        printk.open(other, follow=True, partial=True)
    log = tmp_path / "a.log"
    run_writer(log, recs(1))
    r = printk.open(log)
    r.close()
    with pytest.raises(ValueError):
        next(r)


def test_version_agrees():
    assert printk.library_version() == printk.__version__
    with open(os.path.join(TOP, "CMakeLists.txt")) as f:
        assert "project(libprintk VERSION %s " % printk.__version__ in f.read()


@pytest.mark.skipif(not shutil.which("cc"), reason="no C compiler")
def test_struct_layout_matches_header(tmp_path):
    src = tmp_path / "layout.c"
    src.write_text(
        "#include <stddef.h>\n#include <stdio.h>\n#include <printk/log.h>\n"
        "int main(void) { printf(\"%zu %zu %zu %zu %zu\\n\", sizeof(struct pk_record),"
        " offsetof(struct pk_record, text_len), offsetof(struct pk_record, dict_len),"
        " offsetof(struct pk_record, text), offsetof(struct pk_record, dict)); return 0; }\n")
    exe = tmp_path / "layout"
    subprocess.run(["cc", "-std=c11", "-I", os.path.join(TOP, "include"), str(src), "-o", str(exe)],
                   check=True)
    want = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    R = printk._PkRecord
    got = [printk.ctypes.sizeof(R), R.text_len.offset, R.dict_len.offset, R.text.offset,
           R.dict.offset]
    assert [int(x) for x in want] == got


def test_wall_clock_field(tmp_path):
    """A log written under a wall clock frozen by libfaketime (both clocks:
    the record's CLOCK_MONOTONIC stamp is the frozen time, the log's offset
    0), then read here: realtime_ns and wall are exact."""
    fakelib = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
    writer = os.path.join(os.path.dirname(os.environ["PRINTK_LIBRARY"]), "tests", "time-writer")
    assert os.path.exists(fakelib), "needs libfaketime (Debian: faketime, scripts/setup.sh)"
    assert os.path.exists(writer), writer
    log = tmp_path / "w.log"
    env = dict(os.environ, TZ="Asia/Kolkata", LD_PRELOAD=fakelib,
               FAKETIME="2026-12-05 22:49:32.123456", PRINTK_CLOCK="monotonic",
               PRINTK_OPTS="console=none log_buf_file=%s" % log)
    subprocess.run([writer, "hello"], env=env, check=True, timeout=60)
    got = list(printk.open(log))
    assert [r.text for r in got] == ["hello"]
    assert got[0].realtime_ns == 1796491172123456000  # 2026-12-05T17:19:32.123456Z
    assert got[0].wall.isoformat() == "2026-12-05T17:19:32.123456+00:00"


def _testgen():
    """udmesg-testgen of the build whose library the tests load."""
    build = os.path.dirname(os.path.realpath(os.environ["PRINTK_LIBRARY"]))
    path = os.path.join(build, "tests", "udmesg-testgen")
    assert os.access(path, os.X_OK), "udmesg-testgen not built beside %s" % build
    return path


def test_lanes_killed_writer(tmp_path):
    """A log written with lanes on (docs/lanes.md) by a writer SIGKILLed with
    records still in its lanes (udmesg-testgen lanes: 3 threads, 200 lines
    each, some merged as lanes filled): every record once, in one dense
    sequence, each thread's in order, exact text; after a writer merged
    the lanes, the same records at the same seqs."""
    log = tmp_path / "lanes.log"
    n = 200
    p = subprocess.run([_testgen(), "lanes", str(log), str(n)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == -9, (p.returncode, p.stderr)
    assert p.stdout.startswith("pending ") and int(p.stdout.split()[1]) > 0, p.stdout
    pad = "abcdefghijklmnopqrstuvwxyz0123456789"
    want = {"lane %d line %d %s" % (t, i, pad[:(i * 7 + t) % 30]) for t in range(3)
            for i in range(n)}

    def check(got):
        assert [r.seq for r in got] == list(range(3 * n))
        assert sorted(r.text for r in got) == sorted(want)
        for t in range(3):
            mine = [int(r.text.split()[3]) for r in got if r.text.startswith("lane %d " % t)]
            assert mine == list(range(n))
        return [(r.seq, r.text, r.ts_nsec, r.tid) for r in got]

    before = check(list(printk.open(log)))
    p = subprocess.run([_testgen(), "merge", str(log)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout == "next %d\n" % (3 * n), (p.stdout, p.stderr)
    assert check(list(printk.open(log))) == before
