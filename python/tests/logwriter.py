# SPDX-License-Identifier: MIT
"""A child process that writes a libprintk log file for the tests.

Reads a JSON job on stdin: path, size, records (text, level, facility,
dict as KEY=VALUE strings), delay and gap (seconds before the first and
between records), open_line. Stores the records with pk_log_store() on
pk_log_open_file(path) and prints one JSON line: pid, tid, first_seq,
next_seq. With open_line, it then prints that text without a newline
through printk (PRINTK_OPTS=log_buf_file=PATH) and kills itself with
SIGKILL, leaving the line open in the file.
"""
import ctypes
import json
import os
import signal
import sys
import threading
import time

job = json.load(sys.stdin)
if job["open_line"] is not None:
    # Read by the library's constructor when it loads, below.
    os.environ["PRINTK_OPTS"] = "log_buf_file=%s console=none log_buf_len=%d" % (
        job["path"], job["size"])
lib = ctypes.CDLL(os.environ["PRINTK_LIBRARY"])
lib.pk_log_open_file.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                 ctypes.c_size_t, ctypes.c_uint]
lib.pk_log_store.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                             ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
lib.pk_log_first_seq.restype = ctypes.c_uint64
lib.pk_log_first_seq.argtypes = [ctypes.c_void_p]
lib.pk_log_next_seq.restype = ctypes.c_uint64
lib.pk_log_next_seq.argtypes = [ctypes.c_void_p]
lib.pk_log_destroy.argtypes = [ctypes.c_void_p]
lib.pk_printk_log.restype = ctypes.c_void_p

if job["open_line"] is not None:
    log = ctypes.c_void_p(lib.pk_printk_log())
else:
    log = ctypes.c_void_p()
    err = lib.pk_log_open_file(ctypes.byref(log), job["path"].encode(), job["size"], 0)
    if err:
        sys.exit("pk_log_open_file: %d" % err)
time.sleep(job["delay"])
for i, r in enumerate(job["records"]):
    if i and job["gap"]:
        time.sleep(job["gap"])
    text = r["text"].encode("utf-8", "surrogateescape")
    d = b"\0".join(e.encode() for e in r.get("dict", []))
    err = lib.pk_log_store(log, r.get("facility", 1), r.get("level", 6), text, len(text),
                           d or None, len(d))
    if err:
        sys.exit("pk_log_store: %d" % err)
print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id(),
                  "first_seq": lib.pk_log_first_seq(log), "next_seq": lib.pk_log_next_seq(log)}),
      flush=True)
if job["open_line"] is not None:
    lib.pk_printk(job["open_line"].encode())
    os.kill(os.getpid(), signal.SIGKILL)
lib.pk_log_destroy(log)
