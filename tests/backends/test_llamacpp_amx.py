"""The AMX advice: said before a model loads on a llama.cpp build with AMX
kernels (they crash at the first prompt on some machines), not otherwise."""

from __future__ import annotations

from pathlib import Path

import llama_cpp
import pytest

from conformbench.backends.llamacpp.amx import PORTABLE_CMAKE_ARGS, uses_amx, warn_if_amx

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


@pytest.mark.parametrize(("info", "said"), [(NATIVE_AMX, True), (PORTABLE, False)])
def test_the_advice_is_printed_only_for_an_amx_build(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str],
                                                     info: str, said: bool) -> None:
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: info.encode())
    assert warn_if_amx() is said
    err = capsys.readouterr().err
    assert ("segmentation fault" in err and PORTABLE_CMAKE_ARGS in err) is said
    assert bool(err) is said


def test_ci_builds_llama_cpp_the_portable_way() -> None:
    """CI builds llama-cpp-python as the advice says, so a CI machine with
    AMX runs the model tests instead of crashing in them."""
    assert PORTABLE_CMAKE_ARGS in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
