"""What the transformers backend declares (its ``manifest``), importable
without torch, transformers or jinja2: its options and their checks, and
what it can do."""

from __future__ import annotations

from typing import Any

from conformbench.backends.manifest import BackendManifest, BackendOption, BuildFacts
from conformbench.backends.transformers.options import DEVICES, DTYPE_NAMES, DTYPES, check_device, check_dtype
from conformbench.backends.transformers.vocabulary import read_vocabulary
from conformbench.registry import join_names

__all__ = ["DEVICES", "DTYPES", "DTYPE_NAMES", "MANIFEST", "build_facts", "check_device", "check_dtype",
           "loading_note"]

#: engines whose grammar lives in llama.cpp's own sampler
_LLAMA_ONLY = {"gbnf": "its grammar runs inside llama.cpp's sampler, which transformers does not use "
                       "(use llguidance, xgrammar or outlines)"}


def build_facts() -> dict[str, Any]:
    """torch's and transformers' versions and torch's CPU capability."""
    try:
        import torch
    except ImportError:
        return {"installed": False}
    from conformbench.backends.runinfo import library_versions

    capability = torch.backends.cpu.get_cpu_capability()
    return {"torch": str(torch.__version__), "transformers": library_versions(("transformers",))["transformers"],
            "cpu_capability": capability}


def loading_note(model: str | None) -> str | None:
    """A GGUF (the embedded model, an alias, a .gguf path) is dequantised to
    torch weights first: tens of seconds with nothing else to show."""
    from conformbench.backends.locate import MODEL_ALIASES

    if model is None or model in MODEL_ALIASES or model.endswith(".gguf"):
        return "dequantising the GGUF to torch weights first, about half a minute for SmolLM2-135M on 2 cores"
    return None


MANIFEST = BackendManifest(
    options=(
        BackendOption("dtype", str, metavar="NAME", check=check_dtype, affects_build=True,
                      help=f"Weights' dtype: {join_names(DTYPE_NAMES)} (default bf16)."),
        BackendOption("device", str, metavar="NAME", check=check_device,
                      help=f"Device: {join_names([*DEVICES, 'cuda:N'])}; auto (the default) is cuda when torch "
                           "sees a GPU, else cpu."),
    ),
    constraint_side="local",
    distributions=("torch", "transformers", "accelerate", "gguf", "tokenizers"),
    # generate's beam search, and attention captured at the answer position
    beams=True,
    attention=True,
    refused_engines=_LLAMA_ONLY,
    embedded_model=True,
    loading_note=loading_note,
    vocabulary=read_vocabulary,
    # a part of a run spread by Ray takes a GPU unless told to run on the CPU
    gpus=lambda extra: 0.0 if extra.get("device") == "cpu" else 1.0,
    build=BuildFacts("torch", "torch build",
                     "torch and transformers versions and torch's CPU capability (transformers backend runs)",
                     build_facts),
)
