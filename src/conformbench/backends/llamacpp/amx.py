"""llama.cpp's AMX kernels, and the crash they cause on some machines.

A llama.cpp built for the machine it is built on (llama-cpp-python's default,
what ``pip install .`` builds) uses AMX kernels on a CPU that has AMX (Intel
Sapphire Rapids and later). With llama-cpp-python 0.3.36 they kill the
process (segmentation fault or illegal instruction) at the first prompt on
some such machines (measured on the embedded Q4_1 model; upstream: llama.cpp
issue #20824). A signal cannot be caught in Python, so on such a build the
backend loads models with llama.cpp's extra CPU buffer types off
(``llama_model_params.use_extra_bufts = False``): the AMX kernels (and the
weight repacking that shares the switch) are then never used, and the model
runs on the build's AVX-512/AVX2 kernels. A build without AMX kernels (the
portable one the shipped replays were made on) loads exactly as before.
The replay header's ``build.llama_cpp.extra_buffer_types`` records which.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from conformbench.backends.runinfo import llama_cpp_system_info, uses_amx

__all__ = ["PORTABLE_CMAKE_ARGS", "extra_buffer_types", "loading_for_this_build", "uses_amx"]

#: the portable build (AVX2, no AMX or AVX-512) the shipped replays were made on
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"

_PATCH = threading.Lock()


def extra_buffer_types() -> bool:
    """Whether models load with llama.cpp's extra buffer types on this build:
    not where it has AMX kernels."""
    return not uses_amx(llama_cpp_system_info())


@contextmanager
def loading_for_this_build() -> Iterator[bool]:
    """Around a ``llama_cpp.Llama(...)`` that loads weights: on a build with
    AMX kernels, the model params it builds have ``use_extra_bufts`` off
    (``Llama`` takes no such argument; it asks
    ``llama_cpp.llama_cpp.llama_model_default_params`` for them). Yields
    whether extra buffer types stay on."""
    if extra_buffer_types():
        yield True
        return
    import llama_cpp.llama_cpp as lib

    with _PATCH:
        default = lib.llama_model_default_params

        def without_extra_bufts() -> Any:
            params = default()
            params.use_extra_bufts = False
            return params

        lib.llama_model_default_params = without_extra_bufts
        try:
            yield False
        finally:
            lib.llama_model_default_params = default
