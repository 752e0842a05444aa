"""The embedded GGUF written out as a Hugging Face folder (what vLLM
serves): the folder's greedy answers on 5 prompts are the transformers
backend's on the GGUF, and the folder says nothing of the GGUF's
quantisation. Long: two model loads and ten generations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.backends.base import backends
from conformbench.backends.transformers.hf_folder import export_hf_folder
from conformbench.backends.transformers.loading import missing_extra
from conformbench.errors import UsageError
from conformbench.records.generation import BackendConfig, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt

MISSING = missing_extra()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.long,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(MISSING is not None, reason=f"the [hf] extra is not installed: {MISSING}"),
]
PROMPTS = (
    "What is 6 times 7? Answer in one short sentence.",
    "Name a colour.",
    "Write a JSON object with a name and an age.",
    "What is the capital of France?",
    "Say hello.",
)


def _answers(model: str | None) -> list[str]:
    backend = backends.create("transformers", BackendConfig(model=model, threads=1))
    try:
        requests = [GenerationRequest(Prompt((Message("user", p),)), DecodingSettings(max_tokens=16))
                    for p in PROMPTS]
        return [r.text for r in backend.generate_many(requests)]
    finally:
        backend.close()


def test_the_folder_answers_as_the_gguf_does(tmp_path: Path) -> None:
    folder = export_hf_folder(tmp_path / "hf")
    config = json.loads((folder / "config.json").read_text())
    assert "quantization_config" not in config and config["dtype"] == "bfloat16"
    assert (folder / "model.safetensors").stat().st_size < 300_000_000  # bf16: half of float32
    assert (folder / "chat_template.jinja").exists() or "chat_template" in (folder / "tokenizer_config.json").read_text()
    assert _answers(str(folder)) == _answers(None)
    with pytest.raises(UsageError, match="not empty"):
        export_hf_folder(folder)
