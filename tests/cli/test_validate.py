"""``conformbench validate``: exit codes 0 / 1 / 2, text and JSON output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.validator.schema_validator import validator_for

SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer", "maximum": 3}, "b": {"type": "string"}},
    "required": ["a"],
}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    contents = {
        "schema.json": json.dumps(SCHEMA),
        "ok.json": '{"a": 2}',
        "bad.json": '{"a": 7, "b": 1}',
        "array.json": "[1]",
        "broken.json": "{a",
        "ok.yaml": "a: 1\nb: hello\n",
        "bad.yaml": "a: 9\n",
        "unsat.json": '{"type": "integer", "minimum": 5, "maximum": 2}',
        "invalid.json": '{"type": 5}',
    }
    out = {}
    for name, text in contents.items():
        (tmp_path / name).write_text(text)
        out[name] = tmp_path / name
    return out


def test_valid_instances_exit_0(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(files["schema.json"]), str(files["ok.json"])]) == 0
    assert "valid" in capsys.readouterr().out
    assert main(["validate", str(files["schema.json"]), str(files["ok.yaml"]), "--format", "yaml"]) == 0


def test_invalid_instances_exit_1(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["validate", str(files["schema.json"]), str(files["ok.json"]), str(files["bad.json"]),
            str(files["array.json"]), str(files["broken.json"])]
    assert main(args) == 1
    shown = capsys.readouterr().out
    assert "maximum at /a (schema /properties/a/maximum)" in shown
    assert "[root type]" in shown
    assert "broken.json: invalid: not valid JSON" in shown
    assert "position:" not in shown  # only when asked
    assert main([*args, "--positions"]) == 1
    assert "position: json=" in capsys.readouterr().out


def test_json_verdicts(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["validate", str(files["schema.json"]), str(files["bad.yaml"]), "--format", "yaml", "--json"]
    assert main(args) == 1
    assert json.loads(capsys.readouterr().out)[0]["violations"][0]["positions"] is None
    assert main([*args, "--positions"]) == 1
    verdicts = json.loads(capsys.readouterr().out)
    assert len(verdicts) == 1 and verdicts[0]["valid"] is False and verdicts[0]["parsed"] is True
    (violation,) = verdicts[0]["violations"]
    assert violation["keyword"] == "maximum" and violation["instance_path"] == "/a"
    assert violation["schema_path"] == "/properties/a/maximum" and violation["root_type"] is False
    assert set(violation["positions"]) == {"json", "yaml", "xml", "python", "nl"}
    assert violation["positions"]["json"] in ("begin", "middle", "end")


@pytest.mark.parametrize(
    ("schema", "instance", "message"),
    [
        ("unsat.json", "ok.json", "unsatisfiable"),
        ("invalid.json", "ok.json", "invalid schema"),
        ("missing.json", "ok.json", "cannot read"),
        ("schema.json", "missing.json", "cannot read"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    schema: str, instance: str, message: str,
) -> None:
    assert main(["validate", str(tmp_path / schema), str(tmp_path / instance)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_bad_usage_exits_2(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(files["schema.json"])]) == 2
    assert main(["validate", str(files["schema.json"]), str(files["ok.json"]), "--format", "jsn"]) == 2
    assert "did you mean 'json'" in capsys.readouterr().err


def test_exit_codes_through_a_subprocess(files: dict[str, Path]) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "conformbench.cli.main", "validate", *args],
                              capture_output=True, text=True, check=False, timeout=120)

    assert run(str(files["schema.json"]), str(files["ok.json"])).returncode == 0
    assert run(str(files["schema.json"]), str(files["bad.json"])).returncode == 1
    failed = run(str(files["invalid.json"]), str(files["ok.json"]))
    assert failed.returncode == 2 and "Traceback" not in failed.stderr


@pytest.mark.timeout(120)  # a hang guard: Python's re backtracks for hours on this input
def test_a_hostile_pattern_is_decided(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"},
                                               "t": {"type": "string", "pattern": "^(?=(a|aa)+$)"}}}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "hostile.json").write_text(json.dumps({"s": "a" * 40 + "!", "t": "a" * 40 + "!"}))
    args = ["validate", str(tmp_path / "schema.json"), str(tmp_path / "hostile.json"), "--json"]
    assert main(args) == 1
    (verdict,) = json.loads(capsys.readouterr().out)
    assert [v["schema_path"] for v in verdict["violations"]] == ["/properties/s/pattern", "/properties/t/pattern"]
    assert "not decided" in verdict["violations"][1]["message"]
    assert verdict["pattern_fallbacks"] == 1 and verdict["pattern_timeouts"] == 1
    assert main(args[:-1]) == 1
    assert "1 pattern matches ran on the backtracking engine, 1 of them out of time" in capsys.readouterr().out


def test_draft_formats_through_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = {"$schema": "http://json-schema.org/draft-03/schema#", "type": "object",
              "properties": {"at": {"type": "string", "format": "time"},
                             "hue": {"type": "string", "format": "color"}}}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "ok.json").write_text('{"at": "12:30:00", "hue": "red"}')
    (tmp_path / "bad.json").write_text('{"at": "12:30", "hue": "reddish"}')
    assert main(["validate", str(tmp_path / "schema.json"), str(tmp_path / "ok.json")]) == 0
    assert "ok.json: valid" in capsys.readouterr().out
    # formats are asserted unless turned off
    assert main(["validate", str(tmp_path / "schema.json"), str(tmp_path / "bad.json"),
                 "--no-format-assertion"]) == 0
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "schema.json"), str(tmp_path / "bad.json"), "--json"]) == 1
    verdicts = json.loads(capsys.readouterr().out)
    assert sorted(v["schema_path"] for v in verdicts[0]["violations"]) == [
        "/properties/at/format", "/properties/hue/format"]


def test_paper_idn_email_example_passes_only_with_formats_as_annotations(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The ConCodeEval paper's own few-shot sample for an ``idn-email``
    string is "hchavezexample.org": valid only with formats as annotations
    (JSON Schema 2020-12's default); ``validate`` asserts them by default,
    as ``validator_for`` does, so the two agree."""
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "string", "format": "idn-email"}')
    sample = tmp_path / "sample.json"
    sample.write_text('"hchavezexample.org"')
    assert main(["validate", str(schema), str(sample), "--no-format-assertion"]) == 0
    assert "sample.json: valid" in capsys.readouterr().out
    assert main(["validate", str(schema), str(sample)]) == 1
    assert "sample.json: invalid (1 violation)\n" in capsys.readouterr().out
    assert not validator_for({"type": "string", "format": "idn-email"}).is_valid("hchavezexample.org")


def test_validate_and_the_library_agree_about_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: an order schema with an email; the command and
    ``conformbench.validator_for`` give the same verdict by default."""
    import conformbench

    schema = {"title": "Order", "type": "object", "properties": {"email": {"type": "string", "format": "email"}}}
    (tmp_path / "order.schema.json").write_text(json.dumps(schema))
    for name, value, code in (("good.json", {"email": "a@example.org"}, 0), ("bademail.json", {"email": "nope"}, 1)):
        (tmp_path / name).write_text(json.dumps(value))
        assert main(["validate", str(tmp_path / "order.schema.json"), str(tmp_path / name)]) == code
        assert conformbench.validator_for(schema).is_valid(value) is (code == 0)
    assert "bademail.json: invalid (1 violation)" in capsys.readouterr().out


def test_a_yaml_file_without_format_is_read_as_yaml(files: dict[str, Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Issues #44 and #48: a file's name says its format when --format is not
    given (-h promises it), and an explicit --format overrides the name."""
    assert main(["validate", str(files["schema.json"]), str(files["ok.yaml"])]) == 0
    assert "ok.yaml: valid" in capsys.readouterr().out
    assert main(["validate", str(files["schema.json"]), str(files["ok.yaml"]), "--format", "json"]) == 1
    assert main(["validate", str(files["schema.json"]), str(files["broken.json"])]) == 1
