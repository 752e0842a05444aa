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


def test_build_facts_record_what_decides_identical_texts():
    """The replay header's ``build``: CPU kernel flags, llama.cpp's build and
    system info (llama_print_system_info), and per model threads and dtype."""
    from conformbench.backends.runinfo import build_facts, build_fields
    from conformbench.records.spec import ModelSpec

    facts = build_facts([ModelSpec(label="m", backend="llamacpp", threads=1),
                         ModelSpec(label="hf", backend="transformers", threads=2, extra={"dtype": "float32"})])
    assert set(facts) <= set(build_fields()) and {"cpu_features", "llama_cpp", "torch", "models"} <= set(facts)
    assert isinstance(facts["cpu_features"], list)
    if os.path.exists("/proc/cpuinfo") and os.uname().machine == "x86_64":
        assert "ssse3" in facts["cpu_features"]
    assert facts["llama_cpp"]["llama_cpp_python"] == "0.3.36"
    assert "CPU" in facts["llama_cpp"]["system_info"]  # e.g. "CPU : SSE3 = 1 | AVX = 1 | ..."
    assert facts["torch"]["torch"] and facts["torch"]["transformers"]
    assert facts["models"] == {"m": {"backend": "llamacpp", "threads": 1, "dtype": None},
                               "hf": {"backend": "transformers", "threads": 2, "dtype": "float32"}}
    assert "torch" not in build_facts([ModelSpec(label="m", backend="llamacpp", threads=1)])
