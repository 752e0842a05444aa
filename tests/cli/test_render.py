"""``conformbench render``: every schema format through the real entry
point, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.formats.base import schema_formats

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
}


@pytest.fixture
def schema_file(tmp_path: Path) -> Path:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA), encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["json", "yaml", "xml", "python", "nl"])
def test_prints_the_rendering(fmt: str, schema_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(schema_file), "--format", fmt]) == 0
    out = capsys.readouterr().out
    text = schema_formats.get(fmt)().render(SCHEMA)
    assert out == (text if text.endswith("\n") else text + "\n")


def test_default_format_is_json(schema_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(schema_file)]) == 0
    assert json.loads(capsys.readouterr().out) == SCHEMA


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def test_unknown_format_suggests_the_closest(schema_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _error(["render", str(schema_file), "--format", "pyton"], capsys)
    assert "unknown schema format 'pyton'" in line and "did you mean 'python'?" in line


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"type": 5}', "invalid schema at /type"),
        ("{", "is not valid JSON"),
        ("[1, 2]", "a schema must be a JSON object or boolean"),
        ('{"type": "string", "pattern": "\\\\p{L}+"}', "is not a Python regular expression"),
        ('{"type": "integer", "minimum": 5, "maximum": 1}', "the schema is unsatisfiable: the numeric range is empty"),
        ('{"type": "object", "required": ["a"], "properties": {"a": false}}',
         "the schema is unsatisfiable: required property 'a' is forbidden"),
        ("false", "the schema is unsatisfiable"),
    ],
)
def test_bad_schemas_are_one_line_errors(
    content: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    assert expected in _error(["render", str(path), "--format", "python"], capsys)


def test_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "cannot read" in _error(["render", str(tmp_path / "missing.json")], capsys)


def test_console_script_end_to_end(schema_file: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conformbench.cli.main", "render", str(schema_file), "-f", "nl"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("The value must be an object (type).")


@pytest.mark.parametrize(("said", "meant"), [("pydantic", "python"), ("yml", "yaml"), ("english", "nl")])
def test_another_word_for_a_format_gets_its_name(schema_file: Path, capsys: pytest.CaptureFixture[str],
                                                 said: str, meant: str) -> None:
    """Issue #44: `--format pydantic` (the README's word for the python
    format) had no did-you-mean: spelling alone is too far from 'python'."""
    assert main(["render", str(schema_file), "--format", said]) == 2
    assert f"unknown schema format {said!r} (did you mean {meant!r}?)" in capsys.readouterr().err


def test_usage_names_the_argument_without_braces(capsys: pytest.CaptureFixture[str]) -> None:
    """``render [OPTIONS] SCHEMA_FILE``, not typer's ``{SCHEMA_FILE}`` (#58)."""
    assert main(["render", "-h"]) == 0
    usage = next(line for line in capsys.readouterr().out.splitlines() if "Usage:" in line)
    assert usage.split() == ["Usage:", "conformbench", "render", "[OPTIONS]", "SCHEMA_FILE"]
    assert main(["validate", "-h"]) == 0
    usage = next(line for line in capsys.readouterr().out.splitlines() if "Usage:" in line)
    assert usage.split()[-2:] == ["SCHEMA", "INSTANCE..."]
