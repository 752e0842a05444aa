"""The transformers backend's options and checkpoint location, without
loading a model (no torch needed): bad options and hub ids are refused in
one line with a did-you-mean, the embedded GGUF is the default, a
directory's digest covers its files, gbnf is refused with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.backends.base import backends, constraint_side, engine_mismatch, manifest_of
from conformbench.backends.transformers.loading import (
    Checkpoint,
    checkpoint_digest,
    parse_options,
    resolve_checkpoint,
)
from conformbench.backends.transformers.vocabulary import byte_decoder
from conformbench.errors import UsageError
from conformbench.runner.spec import parse_spec


def test_registered_as_a_local_backend_that_declares_its_versions() -> None:
    manifest = backends.get("transformers").manifest
    assert manifest is manifest_of("transformers")  # the light module's, on the class
    assert constraint_side("transformers") == "local"
    assert engine_mismatch("transformers", "server") is not None
    assert {"torch", "transformers", "accelerate", "gguf"} <= set(manifest.distributions)
    assert manifest.beams and manifest.attention


def test_options_default_to_bf16_on_the_best_device() -> None:
    options = parse_options({})
    assert (options.dtype, options.device, options.chat_template) == ("bfloat16", "auto", "auto")
    assert parse_options({"dtype": "fp32", "device": "cuda:1"}).dtype == "float32"
    assert parse_options({"dtype": "float16"}).dtype == "float16"


@pytest.mark.parametrize(("extra", "words"), [
    ({"dtype": "bf61"}, "did you mean"),
    ({"dtype": "int8"}, "bf16, fp32, fp16"),
    ({"device": "gpu"}, "auto, cpu, cuda"),
    ({"dtpye": "fp32"}, "did you mean 'dtype'"),
    ({"chat_template": "yes"}, "'auto' or 'none'"),
])
def test_bad_options_are_refused_in_one_line(extra: dict[str, str], words: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_options(extra)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_the_default_model_is_the_embedded_gguf(smollm_path: Path) -> None:
    for spec in (None, "smollm2", str(smollm_path)):
        checkpoint = resolve_checkpoint(spec)
        assert checkpoint.path == smollm_path and checkpoint.gguf_file == smollm_path.name
        assert checkpoint.directory == smollm_path.parent


def test_a_hub_id_is_refused_in_one_line() -> None:
    with pytest.raises(UsageError) as err:
        resolve_checkpoint("HuggingFaceTB/SmolLM2-135M-Instruct")
    message = str(err.value)
    assert "fetches nothing from a hub" in message and "--model DIR" in message and "\n" not in message
    with pytest.raises(UsageError, match="did you mean 'smollm2'"):
        resolve_checkpoint("smolm2")


def test_a_directory_needs_a_config_and_its_digest_covers_its_files(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no config.json"):
        resolve_checkpoint(str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "lock").write_text("x")
    checkpoint = resolve_checkpoint(str(tmp_path))
    assert checkpoint == Checkpoint(tmp_path)
    before = checkpoint_digest(checkpoint)
    (tmp_path / ".cache" / "lock").write_text("y")  # hidden files do not count
    assert checkpoint_digest(checkpoint) == before
    (tmp_path / "model.safetensors").write_bytes(b"other weights")
    assert checkpoint_digest(checkpoint) != before


def test_the_byte_alphabet_round_trips_every_byte() -> None:
    decoder = byte_decoder()
    assert sorted(decoder.values()) == list(range(256))
    assert decoder["Ġ"] == ord(" ") and decoder["Ċ"] == ord("\n") and decoder["a"] == ord("a")


def _spec(**decoding: object) -> dict[str, object]:
    return {"models": [{"label": "m", "backend": "transformers", "extra": {"dtype": "fp32"}}],
            "tasks": [{"name": "validation", "n": 2}], "decoding": decoding}


def test_beams_and_attention_are_taken_and_gbnf_refused_before_loading() -> None:
    spec = parse_spec(_spec(beams=3, attention=True))
    assert spec.decoding.beams == 3 and spec.decoding.attention
    gbnf = _spec()
    gbnf["tasks"] = [{"name": "validation", "n": 2, "engines": ["gbnf"]}]
    with pytest.raises(UsageError, match="cannot use engine 'gbnf': its grammar runs inside llama.cpp's sampler"):
        parse_spec(gbnf)
    with pytest.raises(UsageError, match="temperature"):
        parse_spec(_spec(beams=3, temperature=0.5))
