from __future__ import annotations

import json

import pytest

from conformbench.cli.main import main


def test_engines_list_shows_installed_and_unavailable(capsys):
    assert main(["engines", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("gbnf", "llguidance", "outlines", "xgrammar"):
        assert name in out
    assert "installed" in out


def test_probe_rejects_unknown_names_in_one_line(capsys, tmp_path):
    assert main(["engines", "probe", "--keyword", "maximm", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("conformbench: error: no probe for keyword 'maximm' (did you mean 'maximum'?)")
    assert "\n" not in err
    assert main(["engines", "probe", "--engine", "gbfn", "--out", str(tmp_path)]) == 2
    assert "unknown engine 'gbfn'" in capsys.readouterr().err


@pytest.mark.slow
def test_probe_command_writes_both_files(capsys, tmp_path):
    out = tmp_path / "probe"
    argv = ["engines", "probe", "--engine", "llguidance", "--keyword", "uniqueItems", "--keyword", "enum",
            "--n-per-keyword", "1", "--threads", "1", "--out", str(out)]
    assert main(argv) == 0
    data = json.loads((out / "engines.json").read_text())
    assert data["format"] == "conformbench.engines-probe/1"
    assert [k["keyword"] for k in data["engines"][0]["keywords"]] == ["uniqueItems", "enum"]
    # llguidance compiles uniqueItems leniently and leaves it to the validator
    assert data["engines"][0]["keywords"][0]["status"] in ("ignored", "inconclusive")
    assert "| uniqueItems | " in (out / "engines.md").read_text()
    assert "wrote" in capsys.readouterr().err


def test_check_rejects_unknown_names_in_one_line(capsys, tmp_path):
    assert main(["engines", "check", "--suite", "json-schema-test-suit", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("conformbench: error: unknown suite 'json-schema-test-suit' "
                          "(did you mean 'json-schema-test-suite'?)")
    assert "\n" not in err
    assert main(["engines", "check", "--engine", "gbfn", "--out", str(tmp_path)]) == 2
    assert "unknown engine 'gbfn'" in capsys.readouterr().err
    assert main(["engines", "check", "--draft", "6", "--out", str(tmp_path)]) == 2
    assert "the test suite has no draft '6'" in capsys.readouterr().err


def test_check_command_writes_json_markdown_and_html(capsys, tmp_path):
    out = tmp_path / "check"
    argv = ["engines", "check", "--engine", "llguidance", "--suite", "json-schema-test-suite",
            "--limit", "3", "--mask-positions", "1", "--out", str(out)]
    assert main(argv) == 0
    data = json.loads((out / "engines-check.json").read_text())
    assert data["format"] == "conformbench.engines-check/1"
    (engine,) = data["engines"]
    (source,) = engine["sources"]
    assert (engine["engine"], source["source"], source["schemas"]) == (
        "llguidance", "json-schema-test-suite/draft2020-12", 3)
    assert "| llguidance |" in (out / "engines-check.md").read_text()
    assert (out / "engines-check.html").read_text().startswith("<!DOCTYPE html>")
    captured = capsys.readouterr()
    assert "llguidance" in captured.out and "wrote" in captured.err


def test_check_command_resumes_from_its_directory_and_logs_plain_progress(capsys, tmp_path):
    argv = ["engines", "check", "--engine", "gbnf", "--suite", "json-schema-test-suite",
            "--limit", "2", "--mask-positions", "1", "--out", str(tmp_path)]
    assert main(argv) == 0
    first = capsys.readouterr().err
    assert "gbnf json-schema-test-suite/draft2020-12: 2/2 (100.0%)" in first and "schema/s" in first
    assert main(argv) == 0
    assert "resuming: 2 schema outcomes kept" in capsys.readouterr().err
    assert json.loads((tmp_path / "engines-check.json").read_text())["engines"][0]["resumed"] == 2
    assert main([*argv, "--fresh"]) == 0
    assert json.loads((tmp_path / "engines-check.json").read_text())["engines"][0]["resumed"] == 0
