# SPDX-License-Identifier: MIT
"""The in-tree build backend: the wheel and sdist it makes, and "pip
install ." with no index (nothing may be downloaded)."""
import base64
import hashlib
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(PKG, "_build"))
import printk_build  # noqa: E402


def test_hooks_need_nothing():
    assert printk_build.get_requires_for_build_wheel() == []
    assert printk_build.get_requires_for_build_sdist() == []


def test_wheel(tmp_path):
    name = printk_build.build_wheel(str(tmp_path))
    assert name == "printk-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as zf:
        names = sorted(zf.namelist())
        assert names == ["printk-0.2.0.dist-info/METADATA", "printk-0.2.0.dist-info/RECORD",
                         "printk-0.2.0.dist-info/WHEEL", "printk/__init__.py"]
        meta = zf.read("printk-0.2.0.dist-info/METADATA").decode()
        assert "Name: printk\nVersion: 0.2.0\n" in meta
        with open(os.path.join(PKG, "printk", "__init__.py"), "rb") as f:
            assert zf.read("printk/__init__.py") == f.read()
        # Every RECORD line's hash and size match the member.
        for line in zf.read("printk-0.2.0.dist-info/RECORD").decode().splitlines():
            path, digest, size = line.split(",")
            if path.endswith("/RECORD"):
                assert digest == size == ""
                continue
            data = zf.read(path)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == ("sha256=" + want, len(data))


def test_sdist(tmp_path):
    name = printk_build.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as tf:
        names = set(tf.getnames())
    for want in ("pyproject.toml", "README.md", "PKG-INFO", "_build/printk_build.py",
                 "printk/__init__.py", "tests/test_reader.py"):
        assert "printk-0.2.0/" + want in names


def test_pip_install_offline(tmp_path):
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if pip.returncode:
        pytest.skip("pip is not installed (Debian: python3-pip)")
    target = tmp_path / "site"
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_CACHE_DIR="1", PIP_ROOT_USER_ACTION="ignore")
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--target",
                        str(target), PKG], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    out = subprocess.run(
        [sys.executable, "-c", "import printk; print(printk.__file__); print(printk.library_version())"],
        capture_output=True, text=True, cwd=str(tmp_path),
        env=dict(os.environ, PYTHONPATH=str(target)), check=True).stdout.split()
    assert out == [str(target / "printk" / "__init__.py"), "0.2.0"]
