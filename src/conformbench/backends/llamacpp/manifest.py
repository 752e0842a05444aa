"""What the llamacpp backend declares (its ``manifest``), importable without
llama_cpp, numpy or jinja2: its options, what it can do (beams, attention)
and when beam search cannot run."""

from __future__ import annotations

from conformbench.backends.manifest import BackendManifest, BackendOption

__all__ = ["MANIFEST", "beams_refusal"]


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
)
