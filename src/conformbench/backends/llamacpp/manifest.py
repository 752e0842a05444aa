"""What the llamacpp backend declares (its ``manifest``), importable without
llama_cpp, numpy or jinja2: its options, what it can do (beams, attention)
and when beam search cannot run."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from conformbench.backends.manifest import BackendManifest, BackendOption, BuildFacts

if TYPE_CHECKING:
    from conformbench.engines.base import Vocabulary

__all__ = ["MANIFEST", "beams_refusal", "build_facts", "gguf_vocabulary"]


def beams_refusal(beams: int, temperature: float, engine: str | None) -> str | None:
    """Why a request cannot be decoded with ``beams`` beams (None: it can)."""
    if beams <= 1:
        return None
    if temperature != 0:
        return f"beam search is deterministic: beams = {beams} needs temperature 0, not {temperature}"
    if engine == "gbnf":
        return ("beams > 1 cannot run under engine 'gbnf': its grammar lives in llama.cpp's sampler, "
                "one state per model, not one per beam (use llguidance, outlines or xgrammar)")
    return None


def build_facts() -> dict[str, Any]:
    """llama-cpp-python's version and llama.cpp's system info; extra buffer
    types off where the build runs AMX kernels (backends/llamacpp/amx.py)."""
    try:
        import llama_cpp
    except ImportError:
        return {"installed": False}
    from conformbench.backends.runinfo import llama_cpp_system_info, uses_amx

    info = llama_cpp_system_info()
    facts: dict[str, Any] = {"llama_cpp_python": llama_cpp.__version__, "system_info": info}
    if uses_amx(info):  # recorded only where it departs from llama.cpp's default: other builds' facts as before
        facts["extra_buffer_types"] = False
    return facts


@contextmanager
def gguf_vocabulary(model: str | None) -> Iterator[Vocabulary]:
    """A GGUF's vocabulary (the embedded model's when None), loaded without
    its weights, and released after."""
    from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary
    from conformbench.backends.locate import resolve_model

    vocab = LlamaVocabulary.from_gguf(resolve_model(model))
    try:
        yield vocab
    finally:
        vocab.close()


MANIFEST = BackendManifest(
    options=(
        BackendOption(
            "batched", int, metavar="S", minimum=0, maximum=256,
            help="Sequences decoded together (llamacpp continuous batching; 0: off, the default). An item's "
                 "samples then share one prefill; other outputs can differ from one-at-a-time decoding by "
                 "llama.cpp's batched arithmetic (docs/runtime.md)."),
    ),
    constraint_side="local",
    distributions=("llama-cpp-python",),
    # beams > 1 (beams.py) and attention capture (attention.py), both through instruments.py
    beams=True,
    attention=True,
    beams_refusal=beams_refusal,
    embedded_model=True,
    build=BuildFacts(
        "llama_cpp", "llama.cpp build",
        "llama-cpp-python's version, llama.cpp's system info: the ggml features it was built "
        "with and found on this CPU (llama_print_system_info), and extra_buffer_types: false where models "
        "load with llama.cpp's extra CPU buffer types (AMX, weight repacking) off, as on a build "
        "with AMX kernels (backends/llamacpp/amx.py); absent where they are on",
        build_facts),
    vocabulary=gguf_vocabulary,
)
