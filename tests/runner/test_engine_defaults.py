"""The constraint engine follows the backend: a run that names none gets
llguidance in process and "server" over HTTP, and an engine a backend cannot
apply is refused before anything runs, with the right one named. HTTP-only
flags land in the model's ``extra`` table."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.api import run_options
from conformbench.errors import UsageError
from conformbench.runner.defaults import build_spec, default_spec
from conformbench.runner.run_options import RunOptions
from conformbench.runner.spec import parse_spec

URL = "http://127.0.0.1:9/v1"


def options(**values: object) -> RunOptions:
    """The run's options as the API takes them (backend options by keyword)."""
    return run_options(values)


def _http(tmp_path: Path, **kw: object) -> RunOptions:
    return options(**{"tasks": ("bfcl-simple",), "backend": "openai", "base_url": URL,
                            "model": "my-model", "out": tmp_path, **kw})  # type: ignore[arg-type]


def test_the_default_run_keeps_llguidance_in_its_replay_spec() -> None:
    # a replay of the default run made before engines followed the backend resumes unchanged
    tasks = default_spec().replay_dict()["tasks"]
    assert [t["engines"] for t in tasks] == [["llguidance"]] * len(tasks)


def test_the_openai_backend_gets_the_server_engine(tmp_path: Path) -> None:
    spec = build_spec(None, _http(tmp_path))
    assert spec.tasks[0].engines == ["server"] and spec.models[0].backend == "openai"
    assert spec.models[0].label == "my-model" and spec.replay_dict()["tasks"][0]["engines"] == ["server"]


def test_an_engine_the_backend_cannot_apply_is_refused_naming_the_right_one(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"decodes constraints server-side: use engine 'server', not 'llguidance'"):
        build_spec(None, _http(tmp_path, engines=("llguidance",)))
    local = options(tasks=("gsm8k",), engines=("server",), out=tmp_path)
    with pytest.raises(UsageError, match=r"engine 'server' is for HTTP backends.*'llguidance'"):
        build_spec(None, local)


def test_unconstrained_arms_need_no_engine_fit(tmp_path: Path) -> None:
    spec = build_spec(None, _http(tmp_path, arms=("unconstrained",), engines=("llguidance",)))
    assert spec.tasks[0].engines == ["llguidance"]  # never used: no constrained arm


def test_models_that_constrain_differently_cannot_share_a_task(tmp_path: Path) -> None:
    data = {"models": [{"label": "local"}, {"label": "served", "backend": "openai", "base_url": URL}],
            "tasks": [{"name": "gsm8k", "n": 1}], "out": str(tmp_path)}
    with pytest.raises(UsageError, match=r"different engines \(llamacpp: llguidance, openai: server\)"):
        parse_spec(data)
    data["tasks"] = [{"name": "gsm8k", "n": 1, "arms": ["unconstrained"]}]
    assert parse_spec(data).tasks[0].engines == ["llguidance"]


def test_http_flags_go_to_the_model(tmp_path: Path) -> None:
    spec = build_spec(None, _http(tmp_path, dialect="json_object_schema", endpoint="completions",
                                  concurrency=2, timeout_s=7.5, api_key_env="MY_KEY"))
    model = spec.models[0]
    assert model.extra == {"response_format_dialect": "json_object_schema", "endpoint": "completions",
                           "api_key_env": "MY_KEY"}
    assert (model.concurrency, model.timeout_s) == (2, 7.5)
    config = model.backend_config()
    assert config.extra["endpoint"] == "completions" and config.timeout_s == 7.5


def test_http_flags_merge_into_a_spec_files_extra(tmp_path: Path) -> None:
    spec_file = tmp_path / "s.toml"
    spec_file.write_text('[[models]]\nlabel = "m"\nbackend = "openai"\nbase_url = "' + URL + '"\n'
                         'extra = { backoff_s = 0.1 }\n[[tasks]]\nname = "gsm8k"\nn = 1\n', encoding="utf-8")
    spec = build_spec(spec_file, options(dialect="guided_json"))
    assert spec.models[0].extra == {"backoff_s": 0.1, "response_format_dialect": "guided_json"}


def test_http_flags_on_a_local_backend_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^--dialect, --endpoint apply to the openai backend \(--backend openai\), not 'llamacpp'$"):
        build_spec(None, options(tasks=("gsm8k",), dialect="json_schema", endpoint="chat", out=tmp_path))
