# SPDX-License-Identifier: MIT
"""The build backend of the printk Python package (PEP 517), in-tree.

The package is pure Python, so a wheel is a zip of printk/ and its
.dist-info; this needs only the standard library, and "pip install ."
works without fetching setuptools or anything else. Name, version,
summary and Python requirement come from pyproject.toml's [project] table.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE = "printk"
# Reproducible archives: the time of every member.
_EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01


def _project():
    """The [project] keys this backend uses, read without a TOML library
    (tomllib is Python 3.11+): one "key = value" per line."""
    with open(os.path.join(_ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not section:
        raise RuntimeError("pyproject.toml has no [project] table")
    out = {}
    for key in ("name", "version", "description", "requires-python", "readme"):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), section.group(1), re.M)
        if m:
            out[key] = m.group(1)
    for key in ("name", "version"):
        if key not in out:
            raise RuntimeError("pyproject.toml: [project] has no %s" % key)
    return out


def _metadata(p):
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % p["name"],
        "Version: %s" % p["version"],
        "Summary: %s" % p.get("description", ""),
        "License: MIT",
    ]
    if "requires-python" in p:
        lines.append("Requires-Python: %s" % p["requires-python"])
    body = ""
    if "readme" in p:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(_ROOT, p["readme"]), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _dist_info(p):
    return "%s-%s.dist-info" % (p["name"], p["version"])


def _package_files():
    files = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(_ROOT, _PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                full = os.path.join(dirpath, name)
                files.append((os.path.relpath(full, _ROOT).replace(os.sep, "/"), full))
    return files


def _zip_add(zf, arcname, data):
    info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    p = _project()
    d = os.path.join(metadata_directory, _dist_info(p))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(p))
    return _dist_info(p)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    info = _dist_info(p)
    name = "%s-%s-py3-none-any.whl" % (p["name"], p["version"])
    members = []
    for arcname, full in _package_files():
        with open(full, "rb") as f:
            members.append((arcname, f.read()))
    members.append((info + "/METADATA", _metadata(p).encode()))
    members.append((info + "/WHEEL", (
        "Wheel-Version: 1.0\nGenerator: printk_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    ).encode()))
    record = [_record_line(a, d) for a, d in members] + [info + "/RECORD,,"]
    members.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        for arcname, data in members:
            _zip_add(zf, arcname, data)
    return name


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = "%s-%s" % (p["name"], p["version"])
    name = base + ".tar.gz"
    paths = ["pyproject.toml", "README.md", "_build/printk_build.py"]
    paths += [a for a, _ in _package_files()]
    for dirpath, dirnames, filenames in os.walk(os.path.join(_ROOT, "tests")):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        paths += sorted(os.path.relpath(os.path.join(dirpath, n), _ROOT).replace(os.sep, "/")
                        for n in filenames if n.endswith(".py"))
    os.makedirs(sdist_directory, exist_ok=True)

    def add(tf, arcname, data):
        ti = tarfile.TarInfo(base + "/" + arcname)
        ti.size = len(data)
        ti.mtime = _EPOCH
        ti.mode = 0o644
        tf.addfile(ti, io.BytesIO(data))

    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for rel in paths:
            with open(os.path.join(_ROOT, rel), "rb") as f:
                add(tf, rel, f.read())
        add(tf, "PKG-INFO", _metadata(p).encode())
    return name
