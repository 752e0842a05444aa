"""Attention on the schema at the answer position (``--attention``), read
from transformers' eager attention.

The prompt is evaluated once more with ``attn_implementation="eager"`` (the
SDPA kernels return no weights; the model is switched for that one forward
pass and back) and ``output_attentions=True``; per layer the last query row
(the position whose logits choose the first generated token), averaged over
heads, is split over the schema's tokens exactly as the llama.cpp probe
splits it (``token_span``, ``mass_split``), into the same record.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from conformbench.backends.llamacpp.attention import mass_split, token_span
from conformbench.errors import BackendError
from conformbench.records.attention_record import AttentionRecord

__all__ = ["capture_attention", "eager_attention"]


@contextmanager
def eager_attention(model: Any) -> Iterator[None]:
    """The model with eager attention for the duration."""
    before = getattr(model.config, "_attn_implementation", None) or "sdpa"
    if before == "eager":
        yield
        return
    model.set_attn_implementation("eager")
    try:
        yield
    finally:
        model.set_attn_implementation(before)


def capture_attention(model: Any, pieces: list[bytes], tokens: list[int], device: str,
                      attend: str) -> AttentionRecord | None:
    """The record of ``tokens`` (a prompt whose tokens read as ``pieces``)
    for the schema text ``attend``; None when the text is not in the prompt."""
    import torch

    span = token_span(pieces, attend)
    if span is None:
        return None
    ids = torch.tensor([tokens], device=device)
    with eager_attention(model), torch.no_grad():
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True,
                    use_cache=False)
    layers = out.attentions or ()
    if not layers:
        raise BackendError("transformers returned no attention weights (eager attention not applied)")
    bme: list[tuple[float, float, float]] = []
    profile: list[list[float]] = []
    for weights in layers:
        row = weights[0, :, -1, :].to(torch.float64).mean(dim=0).cpu().numpy()
        split, bins = mass_split(np.asarray(row, dtype=np.float64), span)
        bme.append((round(split[0], 6), round(split[1], 6), round(split[2], 6)))
        profile.append([round(x, 6) for x in bins])
    return AttentionRecord(schema_tokens=span, keys=len(tokens), bme=bme,
                           schema_share=[round(sum(b), 6) for b in bme], profile=profile)
