"""AMX builds: models load with llama.cpp's extra buffer types off where the
build has AMX kernels (they crash at the first prompt on some machines), and
exactly as before on a build without them; a native build on this machine
runs the canary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import llama_cpp
import llama_cpp.llama_cpp as lib
import pytest

from conformbench.backends.llamacpp.amx import (
    PORTABLE_CMAKE_ARGS,
    extra_buffer_types,
    loading_for_this_build,
    uses_amx,
)
from conformbench.backends.runinfo import build_facts, llama_cpp_system_info
from conformbench.records.spec import ModelSpec

ROOT = Path(__file__).resolve().parents[2]
#: llama_print_system_info() of llama-cpp-python 0.3.36, built natively on an
#: AMX machine (it crashed there) and portably (the shipped replays' build)
NATIVE_AMX = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | "
              "BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | "
              "LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 |")
PORTABLE = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 |"


def test_amx_is_read_from_the_system_info() -> None:
    assert uses_amx(NATIVE_AMX)
    assert not uses_amx(PORTABLE)


@pytest.mark.parametrize(("info", "extra"), [(NATIVE_AMX, False), (PORTABLE, True)])
def test_extra_buffer_types_are_off_only_on_an_amx_build(monkeypatch: pytest.MonkeyPatch,
                                                          info: str, extra: bool) -> None:
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: info.encode())
    default = lib.llama_model_default_params
    assert extra_buffer_types() is extra
    with loading_for_this_build() as kept:
        assert kept is extra
        assert lib.llama_model_default_params().use_extra_bufts is extra
    assert lib.llama_model_default_params is default
    assert lib.llama_model_default_params().use_extra_bufts


def test_the_default_params_come_back_after_a_failed_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: NATIVE_AMX.encode())
    default = lib.llama_model_default_params
    with pytest.raises(ValueError), loading_for_this_build():
        raise ValueError("corrupt GGUF")
    assert lib.llama_model_default_params is default


@pytest.mark.parametrize(("info", "extra"), [(NATIVE_AMX, False), (PORTABLE, True)])
def test_the_replay_header_records_the_choice(monkeypatch: pytest.MonkeyPatch, info: str, extra: bool) -> None:
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: info.encode())
    facts = build_facts([ModelSpec(label="m", backend="llamacpp")])
    assert facts["llama_cpp"]["extra_buffer_types"] is extra


def test_ci_keeps_the_portable_build_beside_the_native_check() -> None:
    """CI builds llama-cpp-python portably (the shipped replays' build, whose
    reproduction tests compare texts exactly) and first runs the native
    build's canary (.ci/run)."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert PORTABLE_CMAKE_ARGS in ci


@pytest.mark.skipif(not uses_amx(llama_cpp_system_info()),
                    reason="the installed llama.cpp has no AMX kernels (AMX_INT8 = 1 not in its system info): "
                           "nothing to prove about the AMX crash on this build")
def test_a_native_amx_build_runs_the_canary(tmp_path: Path) -> None:
    """The crash this replaces came at the first prompt of more than a few
    tokens (llama.cpp #20824, exit 139 or 132). A child process runs the
    canary and a constrained item as README command 1 does, so a crash is a
    failed test with its signal, not a dead pytest."""
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "conformbench.cli.main", "run", "--task", "gsm8k", "-n", "1",
            "--arm", "constrained[answer]", "--threads", "1", "--out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert "constraint canary" in done.stdout + done.stderr
    header = json.loads((out / "replay.jsonl").read_text(encoding="utf-8").split("\n", 1)[0])
    assert header["build"]["llama_cpp"]["extra_buffer_types"] is False
    assert (out / "report.md").is_file()
