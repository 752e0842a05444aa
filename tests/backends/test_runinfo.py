from __future__ import annotations

import hashlib
import os

from conformbench.backends.runinfo import hardware_info, library_versions
from conformbench.files import file_sha256


def test_sha256_matches_hashlib_and_follows_changes(tmp_path):
    path = tmp_path / "m.bin"
    path.write_bytes(b"abc" * 1000)
    assert file_sha256(path) == hashlib.sha256(b"abc" * 1000).hexdigest()
    path.write_bytes(b"abcd" * 1000)  # new size (and mtime): the cache must not answer
    assert file_sha256(path) == hashlib.sha256(b"abcd" * 1000).hexdigest()


def test_library_versions_report_installed_and_missing():
    versions = library_versions(("llama-cpp-python", "conformbench-no-such-dist"))
    assert versions["llama-cpp-python"] == "0.3.36"
    assert versions["conformbench-no-such-dist"] is None


def test_hardware_info():
    info = hardware_info()
    assert info["cpu_count"] == os.cpu_count()
    assert info["platform"] and info["python"]
