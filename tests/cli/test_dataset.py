"""``conformbench dataset build|stats``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.cli.main import main


def test_build_then_stats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ds"
    assert main(["dataset", "build", "--out", str(out), "--n", "30", "--seed", "4"]) == 0
    streams = capsys.readouterr()
    assert "wrote 30 schemas" in streams.out
    assert "generated: 30/30 schemas (100.0%)" in streams.err  # a plain progress line where stderr is a log
    lines = (out / "dataset.jsonl").read_text().splitlines()
    assert len(lines) == 30
    record = json.loads(lines[0])
    assert set(record) >= {"id", "schema", "renderings", "valid_instance", "invalid_instances"}
    assert set(record["renderings"]) == {"json", "yaml", "xml", "python", "nl"}
    assert main(["dataset", "stats", str(out)]) == 0
    shown = capsys.readouterr().out
    for title in ("Keyword mix", "Root types", "Nesting depth", "30 schemas"):
        assert title in shown
    assert "type" in shown and "object" in shown


def test_config_file_and_unknown_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "gen.toml"
    config.write_text('[root_kinds]\narray = 1.0\nobject = 0\nstring = 0\nnumber = 0\ninteger = 0\n'
                      'boolean = 0\nnull = 0\nenum = 0\nconst = 0\nany = 0\n')
    out = tmp_path / "arrays"
    assert main(["dataset", "build", "--out", str(out), "--n", "5", "--config", str(config)]) == 0
    cases = [json.loads(line) for line in (out / "dataset.jsonl").read_text().splitlines()]
    assert all(c["schema"]["type"] == "array" for c in cases)
    config.write_text("[keywords]\nminimun = 0.5\n")
    assert main(["dataset", "build", "--out", str(out), "--n", "5", "--config", str(config)]) == 2
    assert "minimun" in capsys.readouterr().err


def test_external_schemas_with_a_broken_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "suite.jsonl"
    src.write_text('{"id": "ok", "schema": {"type": "integer", "maximum": 3}}\n'
                   '{"id": "bad", "schema": {"type": "integr"}}\n'
                   '{"id": "never", "schema": {"type": "integer", "minimum": 9, "maximum": 1}}\n')
    out = tmp_path / "ext"
    assert main(["dataset", "build", "--out", str(out), "--schemas", str(src)]) == 0
    streams = capsys.readouterr()
    assert "wrote 1 schemas" in streams.out
    assert "excluded bad" in streams.err and "excluded never" in streams.err
    assert "suite.jsonl: 3/3 schemas (100.0%)" in streams.err  # progress counts excluded entries too
    excluded = json.loads((out / "excluded.json").read_text())
    assert [e["id"] for e in excluded] == ["bad", "never"]
    assert "unsatisfiable" in excluded[1]["reason"]


def test_bad_usage_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dataset", "build"]) == 2
    assert main(["dataset", "build", "--out", str(tmp_path), "--schema-format", "jsno"]) == 2
    assert "did you mean 'json'" in capsys.readouterr().err
    assert main(["dataset", "stats", str(tmp_path / "missing")]) == 2
    assert main(["dataset", "build", "--out", str(tmp_path), "--schemas", str(tmp_path / "nope")]) == 2


@pytest.mark.slow
def test_stats_tokens_with_the_embedded_tokenizer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ds"
    assert main(["dataset", "build", "--out", str(out), "--n", "8"]) == 0
    capsys.readouterr()
    assert main(["dataset", "stats", str(out), "--tokens"]) == 0
    shown = capsys.readouterr().out
    assert "Schema tokens per format" in shown
    for fmt in ("json", "yaml", "xml", "python", "nl"):
        assert fmt in shown


def test_suite_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "suite"
    assert main(["dataset", "build", "--out", str(out), "--suite", "schemastore", "--n", "2"]) == 0
    assert "wrote 2 schemas" in capsys.readouterr().out
    assert main(["dataset", "build", "--out", str(out), "--suite", "schemastor"]) == 2
    assert "did you mean 'schemastore'" in capsys.readouterr().err
    assert main(["dataset", "build", "--out", str(out), "--suite", "schemastore", "--schemas", str(out)]) == 2
    assert "give one" in capsys.readouterr().err


def test_n_0_is_refused_before_any_progress_bar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The parser refuses it: one line on stderr, nothing drawn first (#58)."""
    assert main(["dataset", "build", "--out", str(tmp_path / "ds"), "-n", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "greater than or equal to 1" in err, err
    assert not (tmp_path / "ds").exists()
