"""The llamacpp backend's --batched lands in the model's ``extra`` table
(so in its BackendConfig and the replay header's spec), over a spec file's,
checked as the backend checks it, and is refused for any other backend, as
--dtype is for llamacpp. No model is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.api import run_options
from conformbench.backends.llamacpp.continuous_batching import batched_option
from conformbench.errors import UsageError
from conformbench.runner.defaults import build_spec
from conformbench.runner.ledger import GenerationKey
from conformbench.runner.run_options import RunOptions


def options(**values: object) -> RunOptions:
    """The run's options as the API takes them (backend options by keyword)."""
    return run_options(values)


def _llamacpp(tmp_path: Path, **kw: object) -> RunOptions:
    return options(**{"tasks": ("gsm8k",), "out": tmp_path, **kw})  # type: ignore[arg-type]


def test_batched_goes_to_the_models_extra_and_backend_config(tmp_path: Path) -> None:
    spec = build_spec(None, _llamacpp(tmp_path, batched=4, threads=1))
    model = spec.models[0]
    assert model.backend == "llamacpp" and model.extra == {"batched": 4}
    config = model.backend_config()
    assert config.extra == {"batched": 4} and config.threads == 1
    assert batched_option(config.extra["batched"]) == 4  # what the backend makes of it


def test_an_explicit_backend_and_zero_are_taken_as_given(tmp_path: Path) -> None:
    spec = build_spec(None, _llamacpp(tmp_path, backend="llamacpp", batched=0))
    assert spec.models[0].extra == {"batched": 0}
    assert build_spec(None, _llamacpp(tmp_path)).models[0].extra == {}  # unset: nothing, off


def test_the_replay_header_spec_records_it_and_a_resume_compares_it(tmp_path: Path) -> None:
    spec = build_spec(None, _llamacpp(tmp_path, batched=8))
    assert spec.replay_dict()["models"][0]["extra"] == {"batched": 8}
    # not an operational key: batched arithmetic can change an output, so it does not resume an unbatched run
    assert GenerationKey.of(spec.replay_spec()).spec.models[0].extra == {"batched": 8}


def test_the_flag_overrides_a_spec_files_extra(tmp_path: Path) -> None:
    spec_file = tmp_path / "s.toml"
    spec_file.write_text('[[models]]\nlabel = "m"\nbackend = "llamacpp"\n'
                         'extra = { batched = 2, chat_template = "none" }\n'
                         '[[tasks]]\nname = "gsm8k"\nn = 1\n', encoding="utf-8")
    assert build_spec(spec_file, options(batched=6)).models[0].extra == {
        "batched": 6, "chat_template": "none"}
    assert build_spec(spec_file, options(batched=0)).models[0].extra["batched"] == 0  # off again
    assert build_spec(spec_file, options()).models[0].extra["batched"] == 2  # no flag: the file's


@pytest.mark.parametrize("value", [-1, 1.5, "4", True])
def test_a_bad_value_is_refused_in_one_line(tmp_path: Path, value: object) -> None:
    with pytest.raises(UsageError, match=r"^--batched must be (a whole number|between 0 and 256), not ") as err:
        build_spec(None, _llamacpp(tmp_path, batched=value))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("kw", "words"), [
    ({"backend": "transformers"}, r"^--batched applies to the llamacpp backend \(--backend llamacpp\), "
                                  r"not 'transformers'$"),
    ({"backend": "openai", "base_url": "http://127.0.0.1:9/v1"}, r"^--batched applies to .* not 'openai'$"),
])
def test_another_backend_refuses_it(tmp_path: Path, kw: dict[str, str], words: str) -> None:
    with pytest.raises(UsageError, match=words):
        build_spec(None, _llamacpp(tmp_path, batched=4, **kw))


def test_a_spec_files_other_backend_refuses_it_too(tmp_path: Path) -> None:
    spec_file = tmp_path / "s.toml"
    spec_file.write_text('[[models]]\nlabel = "m"\nbackend = "transformers"\n'
                         '[[tasks]]\nname = "gsm8k"\nn = 1\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"--batched applies to the llamacpp backend .* not 'transformers'"):
        build_spec(spec_file, options(batched=4))


def test_the_api_takes_it_as_a_run_option(tmp_path: Path) -> None:
    o = run_options({"tasks": "gsm8k", "batched": 3, "out": str(tmp_path)})
    assert build_spec(None, o).models[0].extra == {"batched": 3}
