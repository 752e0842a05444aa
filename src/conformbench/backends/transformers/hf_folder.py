"""A GGUF checkpoint written out as a Hugging Face folder (``config.json``,
safetensors weights, tokenizer and chat template), for servers that take
only such folders (vLLM).

transformers loads a GGUF dequantised (``gguf_file=``), but refuses
``save_pretrained`` on the model it builds that way; its weights copied into
a plain model of the same config save as usual. The folder keeps the dtype
it is given (bfloat16 by default: the transformers backend's default too, so
the folder's greedy answers are the backend's on the GGUF; about 270 MB for
the embedded SmolLM2-135M, 538 MB in float32).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformbench.backends.transformers.loading import (
    HfOptions,
    check_dtype,
    load_checkpoint,
    resolve_checkpoint,
)
from conformbench.errors import UsageError

__all__ = ["export_hf_folder"]


def export_hf_folder(out_dir: Path, model: str | None = None, dtype: str = "bfloat16") -> Path:
    """Write the GGUF ``model`` (default the embedded one) to ``out_dir`` as
    a Hugging Face folder in ``dtype``; returns ``out_dir``. UsageError in
    one line when the model is not a GGUF or the folder is not empty."""
    checkpoint = resolve_checkpoint(model)
    if not checkpoint.gguf_file:
        raise UsageError(f"{checkpoint.path} is a checkpoint directory already: nothing to convert")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise UsageError(f"{out_dir} is not empty: give an empty or new folder to write the checkpoint to")
    torch_dtype = check_dtype(dtype)
    loaded, tokenizer, _device = load_checkpoint(checkpoint, HfOptions(dtype=torch_dtype, device="cpu"), None)
    plain = _plain_copy(loaded, torch_dtype)
    out_dir.mkdir(parents=True, exist_ok=True)
    plain.save_pretrained(str(out_dir), safe_serialization=True)
    tokenizer.save_pretrained(str(out_dir))
    return out_dir


def _plain_copy(loaded: Any, torch_dtype: str) -> Any:
    """A model of ``loaded``'s class and config, holding its weights, that
    ``save_pretrained`` writes (one built from a GGUF it refuses)."""
    import torch

    config = loaded.config
    config.torch_dtype = torch_dtype
    # the GGUF's quantisation note would make a server read the folder as a GGUF
    for key in ("quantization_config", "_name_or_path"):
        if hasattr(config, key):
            delattr(config, key)
    with torch.device("cpu"):
        plain = type(loaded)(config).to(getattr(torch, torch_dtype))
    missing, unexpected = plain.load_state_dict(loaded.state_dict(), strict=False)
    # tied embeddings: lm_head.weight may be absent from one side and shared on the other
    missing = [k for k in missing if k != "lm_head.weight"]
    if missing or unexpected:
        raise UsageError(f"the GGUF's weights do not fit {type(loaded).__name__}: missing {missing[:3]}, "
                         f"unexpected {unexpected[:3]}")
    if getattr(config, "tie_word_embeddings", False):
        plain.tie_weights()
    plain.train(False)
    return plain
