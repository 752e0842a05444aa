"""llama.cpp's AMX kernels, and the crash they cause on some machines.

A llama.cpp built for the machine it is built on (llama-cpp-python's default)
uses AMX kernels on a CPU that has AMX (Intel Sapphire Rapids and later).
With llama-cpp-python 0.3.36 they crash the process with a segmentation fault
at the first prompt on some such machines (measured on the embedded Q4_1
model; upstream: llama.cpp issue #20824). A signal cannot be caught in Python,
so the backend says what to do before it loads a model on such a build.
"""

from __future__ import annotations

import sys

from conformbench.backends.runinfo import llama_cpp_system_info

__all__ = ["AMX_ADVICE", "PORTABLE_CMAKE_ARGS", "uses_amx", "warn_if_amx"]

#: the portable build (AVX2, no AMX or AVX-512) the shipped replays were made on
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"

AMX_ADVICE = (
    "conformbench: this llama.cpp build uses AMX kernels (AMX_INT8 = 1 in its system info), which "
    "crash with a segmentation fault at the first prompt on some machines (llama.cpp issue #20824). "
    f"If that happens, rebuild llama-cpp-python without them: CMAKE_ARGS='{PORTABLE_CMAKE_ARGS}' "
    "pip install --force-reinstall --no-cache-dir --no-deps 'llama-cpp-python==0.3.36' (docs/runtime.md)"
)


def uses_amx(system_info: str) -> bool:
    """Whether a llama.cpp build's system info says it runs AMX kernels."""
    return "AMX_INT8 = 1" in system_info


def warn_if_amx() -> bool:
    """Print ``AMX_ADVICE`` to stderr when the installed llama.cpp uses AMX
    kernels; True when it did."""
    if not uses_amx(llama_cpp_system_info()):
        return False
    print(AMX_ADVICE, file=sys.stderr, flush=True)
    return True
