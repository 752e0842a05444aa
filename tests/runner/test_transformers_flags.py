"""The transformers backend's --dtype and --device land in the model's
``extra`` table (so in its BackendConfig and the replay header's spec),
merged over a spec file's, checked as the backend checks them, and are
refused for any other backend. No model is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.api import run_options
from conformbench.backends.transformers.loading import parse_options
from conformbench.errors import UsageError
from conformbench.runner.defaults import build_spec
from conformbench.runner.ledger import GenerationKey
from conformbench.runner.run_options import RunOptions


def options(**values: object) -> RunOptions:
    """The run's options as the API takes them (backend options by keyword)."""
    return run_options(values)


def _hf(tmp_path: Path, **kw: object) -> RunOptions:
    return options(**{"tasks": ("gsm8k",), "backend": "transformers", "out": tmp_path,
                            **kw})  # type: ignore[arg-type]


def test_dtype_and_device_go_to_the_models_extra_and_backend_config(tmp_path: Path) -> None:
    spec = build_spec(None, _hf(tmp_path, dtype="fp32", device="cpu", threads=1))
    model = spec.models[0]
    assert model.backend == "transformers" and model.extra == {"dtype": "fp32", "device": "cpu"}
    config = model.backend_config()
    assert config.extra == {"dtype": "fp32", "device": "cpu"} and config.threads == 1
    options = parse_options(config.extra)  # what the backend makes of them
    assert (options.dtype, options.device) == ("float32", "cpu")


def test_the_replay_header_spec_records_them_and_a_resume_compares_them(tmp_path: Path) -> None:
    spec = build_spec(None, _hf(tmp_path, dtype="fp16", device="cuda:1"))
    header_model = spec.replay_dict()["models"][0]
    assert header_model["extra"] == {"dtype": "fp16", "device": "cuda:1"}
    # not operational keys: another dtype makes other generations, so it does not resume this run
    assert GenerationKey.of(spec.replay_spec()).spec.models[0].extra == {"dtype": "fp16", "device": "cuda:1"}
    assert build_spec(None, _hf(tmp_path)).replay_dict()["models"][0]["extra"] == {}


def test_one_flag_alone_sets_only_its_key(tmp_path: Path) -> None:
    assert build_spec(None, _hf(tmp_path, device="auto")).models[0].extra == {"device": "auto"}
    assert build_spec(None, _hf(tmp_path, dtype="bfloat16")).models[0].extra == {"dtype": "bfloat16"}


def test_the_flags_merge_into_a_spec_files_extra(tmp_path: Path) -> None:
    spec_file = tmp_path / "s.toml"
    spec_file.write_text('[[models]]\nlabel = "m"\nbackend = "transformers"\n'
                         'extra = { dtype = "fp16", chat_template = "none" }\n'
                         '[[tasks]]\nname = "gsm8k"\nn = 1\n', encoding="utf-8")
    spec = build_spec(spec_file, options(dtype="fp32", device="cpu"))
    assert spec.models[0].extra == {"dtype": "fp32", "chat_template": "none", "device": "cpu"}


@pytest.mark.parametrize(("kw", "words"), [
    ({"dtype": "bf61"}, r"--dtype 'bf61' is not one of bf16, fp32, fp16, bfloat16, float32, float16 "
                        r"\(did you mean 'bf16'\?\)"),
    ({"dtype": "int8"}, r"--dtype 'int8' is not one of bf16, fp32, fp16"),
    ({"device": "gpu"}, r"--device 'gpu' is not auto, cpu, cuda or cuda:N \(did you mean 'cpu'\?\)"),
    ({"device": "cuda:x"}, r"--device 'cuda:x' is not auto, cpu, cuda or cuda:N"),
])
def test_a_bad_value_is_refused_in_one_line_naming_the_known_ones(
        tmp_path: Path, kw: dict[str, str], words: str) -> None:
    with pytest.raises(UsageError, match=words) as err:
        build_spec(None, _hf(tmp_path, **kw))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("kw", "words"), [
    ({}, r"^--dtype applies to the transformers backend \(--backend transformers\), not 'llamacpp'$"),
    ({"backend": "llamacpp", "device": "cpu"}, r"^--dtype, --device apply to the transformers backend .* not 'llamacpp'$"),
    ({"backend": "openai", "base_url": "http://127.0.0.1:9/v1"}, r"^--dtype applies to .* not 'openai'$"),
])
def test_another_backend_refuses_them(tmp_path: Path, kw: dict[str, str], words: str) -> None:
    with pytest.raises(UsageError, match=words):
        build_spec(None, options(**{"tasks": ("gsm8k",), "dtype": "fp32", "out": tmp_path,
                                          **kw}))  # type: ignore[arg-type]


def test_a_spec_files_other_backend_refuses_them_too(tmp_path: Path) -> None:
    spec_file = tmp_path / "s.toml"
    spec_file.write_text('[[models]]\nlabel = "m"\n[[tasks]]\nname = "gsm8k"\nn = 1\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"--device applies to the transformers backend .* not 'llamacpp'"):
        build_spec(spec_file, options(device="cpu"))


def test_the_api_takes_them_as_run_options(tmp_path: Path) -> None:
    o = run_options({"tasks": "gsm8k", "backend": "transformers", "dtype": "fp32", "device": "cpu",
                    "out": str(tmp_path)})
    assert build_spec(None, o).models[0].extra == {"dtype": "fp32", "device": "cpu"}
