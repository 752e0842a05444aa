"""What a new user finds without the source: -h everywhere, `list models`,
`server` among the engines, the custom task from flags alone."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conformbench.backends.locate import embedded_model_path
from conformbench.cli.main import main
from conformbench.runner.defaults import RunOptions, build_spec

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("args", [["-h"], ["run", "-h"], ["engines", "probe", "-h"], ["dataset", "build", "-h"]])
def test_dash_h_is_help(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 0
    assert "Usage:" in capsys.readouterr().out


def test_run_help_names_the_custom_task_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-h"]) == 0
    out = capsys.readouterr().out
    for flag in ("--dataset", "--match", "--normalize", "--tolerance", "--verbose"):
        assert flag in out


def test_list_models_gives_the_embedded_model_with_its_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "models", "--json"]) == 0
    models = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    assert models["smollm2-135m"]["size_bytes"] == os.path.getsize(embedded_model_path())
    assert models["smollm2-135m"]["status"] == "embedded" and "smollm2" in models["smollm2-135m"]["aliases"]
    assert "gemma3-270m" in models
    assert models["smollm2-135m"]["path"] == str(embedded_model_path())  # what a server's --model takes
    assert main(["list", "models"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-135m" in out and f"smollm2-135m: {embedded_model_path()}" in out.splitlines()


def test_list_engines_includes_server(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "engines", "--json"]) == 0
    rows = {r["engine"]: r for r in json.loads(capsys.readouterr().out)["engines"]}
    assert "server" in rows and "--backend openai" in rows["server"]["status"]


def test_the_custom_task_from_flags_alone_records_its_matcher(tmp_path: Path) -> None:
    spec = build_spec(None, RunOptions(tasks=("custom",), dataset=REPO / "examples" / "questions.jsonl",
                                          match="number", tolerance=0.5, n=3, out=tmp_path))
    (task,) = spec.replay_dict()["tasks"]
    assert task["dataset"].endswith("questions.jsonl")
    assert task["params"] == {"match": "number", "tolerance": 0.5}
    default = build_spec(None, RunOptions(tasks=("custom",), dataset=Path("q.jsonl")))
    assert default.replay_dict()["tasks"][0]["params"] == {}  # exact stays the default, unrecorded


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--match", "contain"], "--match: unknown value 'contain'.*did you mean 'contains'"),
        (["--normalize", "lower"], "--normalize: unknown value 'lower'"),
        (["--match", "exact", "--tolerance", "1"], "tolerance applies to match 'number'"),
        ([], "task custom needs a dataset: --dataset FILE"),
    ],
)
def test_bad_custom_flags_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               args: list[str], message: str) -> None:
    dataset = [] if not args else ["--dataset", str(REPO / "examples" / "questions.jsonl")]
    code = main(["run", "--task", "custom", *dataset, *args, "-n", "1", "--out", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert re.search(message, err), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
