#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Start systemd-journal-remote on a listening socket made here and handed
to it as socket activation does (LISTEN_FDS), so that a test can start it
again on the same port while killed connections sit in TIME_WAIT.

usage: jr_launch.py PORT OUTPUT JOURNAL_REMOTE [KEY CERT]
With KEY and CERT it serves https, else http.
"""
import os, socket, sys

port, out, jr = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(64)
os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ["LISTEN_FDS"] = "1"
os.environ["LISTEN_PID"] = str(os.getpid())
if len(sys.argv) > 5:
    listen = ["--listen-https=-3", "--key=" + sys.argv[4], "--cert=" + sys.argv[5]]
else:
    listen = ["--listen-http=-3"]
os.execv(jr, [jr] + listen + ["--output=" + out, "--split-mode=none"])
