# SPDX-License-Identifier: MIT
"""Read libprintk log files from Python.

    import printk
    for rec in printk.open("/run/app.log"):
        print(rec.seq, rec.level, rec.text)

A thin, read-only layer over the installed shared library (libprintk.so.0,
loaded with ctypes; PRINTK_LIBRARY names another file). It uses the
library's public reader API only: pk_log_open_file() with PK_LOG_RDONLY and
pk_log_read(), so it never writes to the log, and sees exactly what udmesg
and kmsg readers see.

Iteration starts at the oldest record. Plain iteration stops after the
newest complete record; with follow=True it waits for new ones, and stops
when none came for `timeout` seconds (None: waits for ever).

Wall-clock time: record.realtime_ns is ts_nsec plus the log's
CLOCK_REALTIME - CLOCK_MONOTONIC offset as the log holds it when the record
is read (pk_log_realtime_offset(), the offset udmesg -T uses), and
record.wall the same as an aware datetime in UTC (microseconds). A record
stored before a clock step is shown with the offset in force when it is
read (docs/clock.md).

Lost records: when records were overwritten before the reader got to them
(the ring is full and writers go on), the next record it yields has
`lost` set to how many were skipped right before it; the reader's `lost`
attribute is the running total. Nothing is ever yielded twice.
"""

import ctypes
import datetime
import errno
import os
import time

__all__ = ["open", "Reader", "Record", "REC_NEWLINE", "REC_CONT", "library_version"]
__version__ = "0.2.0"

# <printk/log.h>. struct pk_record embeds PK_TEXT_MAX and PK_DICT_MAX: they
# are part of the ABI of the soname loaded here (docs/abi.md).
_TEXT_MAX = 1023
_DICT_MAX = 1024
REC_NEWLINE = 0x02  # the message ended its line
REC_CONT = 0x08  # a continuation fragment that could not join its line
_REC_UNFINALIZED = 1
_READ_UNFINALIZED = 0x1
_LOG_RDONLY = 0x1
_SONAME = "libprintk.so.0"

# Follow mode: the public API has no way to sleep on a read-only log handle,
# so the reader looks at the log's head, backing off from 1 ms to 50 ms
# while nothing is new.
_POLL_MIN = 0.001
_POLL_MAX = 0.050


class _PkRecord(ctypes.Structure):
    _fields_ = [
        ("seq", ctypes.c_uint64),
        ("ts_nsec", ctypes.c_uint64),
        ("pid", ctypes.c_uint32),
        ("tid", ctypes.c_uint32),
        ("sigdepth", ctypes.c_uint8),
        ("level", ctypes.c_uint8),
        ("facility", ctypes.c_uint8),
        ("flags", ctypes.c_uint8),
        ("state", ctypes.c_uint8),
        ("text_len", ctypes.c_uint16),
        ("dict_len", ctypes.c_uint16),
        ("text", ctypes.c_char * (_TEXT_MAX + 1)),
        ("dict", ctypes.c_char * (_DICT_MAX + 1)),
    ]


_lib = None


def _library():
    global _lib
    if _lib is None:
        # The library applies PRINTK_OPTS when it loads, and log_buf_file=
        # there would make this process a writer of that file (created if
        # missing). A reader must not be one: the library is loaded with
        # PRINTK_OPTS out of the environment, then it is put back.
        opts = os.environ.pop("PRINTK_OPTS", None)
        try:
            lib = ctypes.CDLL(os.environ.get("PRINTK_LIBRARY") or _SONAME)
        finally:
            if opts is not None:
                os.environ["PRINTK_OPTS"] = opts
        lib.pk_version.restype = ctypes.c_char_p
        lib.pk_version.argtypes = []
        lib.pk_log_open_file.restype = ctypes.c_int
        lib.pk_log_open_file.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                         ctypes.c_size_t, ctypes.c_uint]
        lib.pk_log_destroy.restype = None
        lib.pk_log_destroy.argtypes = [ctypes.c_void_p]
        lib.pk_log_read.restype = ctypes.c_int
        lib.pk_log_read.argtypes = [ctypes.c_void_p, ctypes.c_uint64,
                                    ctypes.POINTER(_PkRecord), ctypes.c_uint]
        lib.pk_log_first_seq.restype = ctypes.c_uint64
        lib.pk_log_first_seq.argtypes = [ctypes.c_void_p]
        lib.pk_log_next_seq.restype = ctypes.c_uint64
        lib.pk_log_next_seq.argtypes = [ctypes.c_void_p]
        lib.pk_log_check.restype = ctypes.c_int
        lib.pk_log_check.argtypes = [ctypes.c_void_p]
        lib.pk_log_realtime_offset.restype = ctypes.c_int
        lib.pk_log_realtime_offset.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)]
        lib.pk_log_strerror.restype = ctypes.c_char_p
        lib.pk_log_strerror.argtypes = [ctypes.c_int]
        _lib = lib
    return _lib


def library_version():
    """The version of the libprintk in use (pk_version()), e.g. "0.2.0"."""
    return _library().pk_version().decode()


def _error(err, path):
    msg = _library().pk_log_strerror(err)
    return OSError(-err, msg.decode() if msg else os.strerror(-err), path)


class Record:
    """One log record.

    seq, ts_nsec (CLOCK_MONOTONIC nanoseconds unless the writer chose
    otherwise), level (0 emerg .. 7 debug), facility (0: kernel/printk),
    flags (REC_NEWLINE, REC_CONT), caller ("T<tid>", as /dev/kmsg's
    caller= field), pid, tid, text (str; bytes that are not UTF-8 appear
    as backslash escapes, text_bytes has them raw), dict (KEY -> VALUE, in
    the record's order), lost (records lost right before this one) and
    partial (the newest record, its line still open: only with
    partial=True), realtime_ns (nanoseconds since the epoch: ts_nsec plus
    the log's wall-clock offset when read) and wall (that time as a
    datetime in UTC, to the microsecond).
    """

    __slots__ = ("seq", "ts_nsec", "level", "facility", "flags", "caller", "pid", "tid",
                 "text_bytes", "text", "dict", "lost", "partial", "realtime_ns")

    def __init__(self, raw, lost, offset_ns=0):
        self.seq = raw.seq
        self.ts_nsec = raw.ts_nsec
        self.realtime_ns = raw.ts_nsec + offset_ns
        self.level = raw.level
        self.facility = raw.facility
        self.flags = raw.flags
        self.pid = raw.pid
        self.tid = raw.tid
        self.caller = "T%u" % raw.tid
        text_len = min(raw.text_len, _TEXT_MAX)
        self.text_bytes = ctypes.string_at(ctypes.addressof(raw) + _PkRecord.text.offset, text_len)
        self.text = self.text_bytes.decode("utf-8", "backslashreplace")
        dict_len = min(raw.dict_len, _DICT_MAX)
        dict_bytes = ctypes.string_at(ctypes.addressof(raw) + _PkRecord.dict.offset, dict_len)
        self.dict = {}
        for entry in dict_bytes.split(b"\0"):
            key, sep, value = entry.partition(b"=")
            if sep:
                self.dict[key.decode("utf-8", "backslashreplace")] = \
                    value.decode("utf-8", "backslashreplace")
        self.lost = lost
        self.partial = raw.state == _REC_UNFINALIZED

    @property
    def wall(self):
        """realtime_ns as an aware datetime in UTC (microseconds, rounded down)."""
        sec, ns = divmod(self.realtime_ns, 1000000000)
        return (datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
                + datetime.timedelta(seconds=sec, microseconds=ns // 1000))

    def __repr__(self):
        return "<printk.Record seq=%d level=%d facility=%d text=%r>" % (
            self.seq, self.level, self.facility, self.text)


class Reader:
    """An open log file, read-only; iterate it for Record objects.

    Use printk.open(). The reader is an iterator: a second loop over it goes
    on where the first stopped (a plain one yields what came meanwhile).
    Close it with close() or a with block.
    """

    def __init__(self, path, follow=False, timeout=None, partial=False):
        self._log = None
        if follow and partial:
            raise ValueError("partial=True reads a log post mortem; it cannot follow")
        if timeout is not None and timeout < 0:
            raise ValueError("timeout must be None or >= 0")
        lib = _library()
        self.path = os.fspath(path)
        self.follow = follow
        self.timeout = timeout
        self._flags = _READ_UNFINALIZED if partial else 0
        self.lost = 0
        handle = ctypes.c_void_p()
        err = lib.pk_log_open_file(ctypes.byref(handle), os.fsencode(self.path), 0, _LOG_RDONLY)
        if err:
            raise _error(err, self.path)
        self._log = handle
        self._rec = _PkRecord()
        self.next_seq = lib.pk_log_first_seq(handle)

    def close(self):
        if self._log:
            _library().pk_log_destroy(self._log)
            self._log = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def __iter__(self):
        return self

    def _read(self):
        """The next Record, or None when there is none yet."""
        if not self._log:
            raise ValueError("read from a closed printk.Reader")
        err = _library().pk_log_read(self._log, self.next_seq, ctypes.byref(self._rec), self._flags)
        if err == -errno.EAGAIN:
            return None
        if err:
            raise _error(err, self.path)
        raw = self._rec
        lost = raw.seq - self.next_seq
        self.lost += lost
        # With partial=True an open line is yielded once, as it stands: it is
        # the newest record, and a post-mortem read has nothing after it.
        self.next_seq = raw.seq + 1
        offset = ctypes.c_int64(0)
        _library().pk_log_realtime_offset(self._log, ctypes.byref(offset))
        return Record(raw, lost, offset.value)

    def __next__(self):
        rec = self._read()
        if rec is not None:
            return rec
        if not self.follow:
            raise StopIteration
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        pause = _POLL_MIN
        lib = _library()
        while True:
            if lib.pk_log_next_seq(self._log) > self.next_seq:
                rec = self._read()
                if rec is not None:
                    return rec
            err = lib.pk_log_check(self._log)
            if err:
                raise _error(err, self.path)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StopIteration
                time.sleep(min(pause, left))
            else:
                time.sleep(pause)
            pause = min(pause * 2, _POLL_MAX)


def open(path, *, follow=False, timeout=None, partial=False):  # noqa: A001 (as io.open)
    """Open the libprintk log file at `path` read-only and return a Reader.

    follow: after the newest record, wait for new ones instead of stopping.
    timeout: with follow, stop when no record came for this many seconds
    (None: never stop).
    partial: also yield the newest record while its line is still open
    (record.partial is True), as udmesg --partial does for a log whose
    writer died mid-line.

    Raises OSError with the library's error (ENOENT, EPROTO: not a libprintk
    log, EPROTONOSUPPORT: another format version, EBADMSG: corrupted, ...).
    """
    return Reader(path, follow=follow, timeout=timeout, partial=partial)
