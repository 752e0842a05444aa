"""Non-finite settings, numbers outside the JSON data model in XML, and
report text that a spreadsheet or a Markdown renderer would run (issue #28,
items 7, 8, 9 and the XML overflow)."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.formats.base import output_formats
from conformbench.importers.validbutwrong import read_validbutwrong
from conformbench.records.generation import BackendConfig, DecodingSettings
from conformbench.records.spec import RunSpec
from conformbench.scoring.concodeeval.figures import markdown_html
from conformbench.scoring.sections import md_text
from conformbench.validator.schema_validator import validator_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
import runfakes  # noqa: F401  (registers the fake backend)

DATA = Path(__file__).resolve().parents[1] / "data" / "validbutwrong"
HOSTILE_LABEL = "=HYPERLINK(\"http://x\")|<script>alert(1)</script>"


@pytest.mark.parametrize("flag", ["--timeout", "--temperature"])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_non_finite_options_are_one_line(flag: str, value: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--task", "gsm8k", "--n", "1", "--out", str(tmp_path / "out"), flag, value])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("conformbench: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "out" / "replay.jsonl").exists()


def test_non_finite_toml_values_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for extra in ("timeout_s = inf", "[models.extra]\nbudget = nan"):
        spec = tmp_path / "spec.toml"
        spec.write_text(f'[[models]]\nbackend = "llamacpp"\nlabel = "m"\n{extra}\n\n'
                        '[[tasks]]\nname = "gsm8k"\nn = 1\n')
        code = main(["run", "--spec", str(spec), "--out", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert code == 2 and "finite number" in err and err.count("\n") == 1, err


def test_a_1200_deep_dotted_table_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue #49 defect 9: tomllib reads it, and what recursed into it next
    (deepcopy, pydantic's Any fields, the finite check) hit RecursionError."""
    spec = tmp_path / "deep.toml"
    spec.write_text('[[tasks]]\nname = "gsm8k"\n[tasks.params]\n' + "a." * 1200 + "b = 1\n", encoding="utf-8")
    code = main(["run", "--spec", str(spec), "--n", "1", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("conformbench: error: ") and err.count("\n") == 1, err
    assert "nested deeper than 128 levels" in err and not (tmp_path / "out").exists()


def _deep(levels: int) -> dict[str, object]:
    top: dict[str, object] = {}
    node = top
    for _ in range(levels):
        node["a"] = node = {}
    return top


def test_a_deep_or_cyclic_mapping_through_the_api_is_one_usage_error(tmp_path: Path) -> None:
    import conformbench

    cyclic: dict[str, object] = {"name": "gsm8k"}
    cyclic["params"] = {"again": cyclic}
    shared = {"k": 1}  # reached twice without a cycle: fine
    cases = [({"tasks": [{"name": "gsm8k", "params": _deep(1200)}]}, "nested deeper than 128 levels"),
             ({"tasks": [cyclic]}, "tasks.0.params.again: a table that contains itself"),
             ({"tasks": [{"name": "gsm8k", "params": [shared, shared]}]}, "params")]
    for spec, needle in cases:
        with pytest.raises(UsageError) as caught:
            conformbench.run({**spec, "out": str(tmp_path / "out")}, quiet=True)
        assert needle in str(caught.value) and len(str(caught.value)) < 300
    assert not (tmp_path / "out").exists()


def test_records_refuse_non_finite_numbers() -> None:
    base = {"models": [{"label": "m", "backend": "fake"}], "tasks": [{"name": "gsm8k"}]}
    RunSpec.model_validate(base)
    for bad in ({"decoding": {"temperature": float("inf")}},
                {"tasks": [{"name": "gsm8k", "params": {"k": [1.0, float("nan")]}}]}):
        with pytest.raises(ValueError, match="finite"):
            RunSpec.model_validate({**base, **bad})
    with pytest.raises(ValueError, match="finite"):
        BackendConfig(timeout_s=float("inf"))
    with pytest.raises(ValueError, match="finite"):
        DecodingSettings(temperature=float("nan"))


def test_an_imported_infinity_is_one_line(tmp_path: Path) -> None:
    lines = (DATA / "gsm8k.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    arm = next(iter(record["arms"]))
    record["arms"][arm]["seconds"] = float("inf")
    bad = tmp_path / "vbw.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n", encoding="utf-8")
    assert "Infinity" in bad.read_text(encoding="utf-8")
    with pytest.raises(UsageError, match=r":2: Infinity is not a finite JSON number"):
        read_validbutwrong(bad)


@pytest.mark.parametrize("text", ["<root>1e999</root>", "<root>-1e999</root>", "<root type=\"float\">1e999</root>"])
def test_xml_numbers_that_overflow_are_errors_as_in_json(text: str) -> None:
    schema = {"type": "number"}
    assert not output_formats.get("json")().parse("1e999", schema).ok
    parsed = output_formats.get("xml")().parse(text, schema)
    assert not parsed.ok and "overflows" in (parsed.error or "")
    ok = output_formats.get("xml")().parse("<root>1e300</root>", schema)
    assert ok.ok and validator_for(schema).is_valid(ok.value)


def test_yaml_keeps_the_same_promise() -> None:
    assert not output_formats.get("yaml")().parse("1e999", {"type": "number"}).ok


def _scored_report(out: Path) -> Path:
    from conformbench.reports.rescore import score_replays
    from conformbench.reports.write import write_reports
    from conformbench.runner.run import execute
    from conformbench.runner.spec import parse_spec

    spec = {
        "models": [{"label": label, "backend": "fake", "extra": {"reply": "80.43"}}
                   for label in (HOSTILE_LABEL, "@SUM(A1)")],
        "tasks": [{"name": "generation", "n": 2, "schema_formats": ["json"], "output_formats": ["json"],
                   "arms": ["prompt_only"]}],
        "decoding": {"max_tokens": 16}, "out": str(out), "canary": False, "quiet": True,
    }
    execute(parse_spec(spec))
    write_reports(score_replays([out / "replay.jsonl"]), out / "report")
    return out / "report"


def test_ledger_cells_cannot_be_formulas_and_markdown_shows_html_as_text(tmp_path: Path) -> None:
    report = _scored_report(tmp_path)
    rows = list(csv.reader(io.StringIO((report / "ledger.csv").read_text(encoding="utf-8"))))
    models = {row[1] for row in rows[1:]}
    assert models == {"'" + HOSTILE_LABEL, "'@SUM(A1)"}
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for cell in row)
    md = (report / "report.md").read_text(encoding="utf-8")
    assert "<script>" not in md and "&lt;script>alert(1)&lt;/script>" in md
    table = [line for line in md.splitlines() if line.startswith("| json | =HYPERLINK")]
    assert table, "the comparison table names the model"
    # the escaped bar keeps the row at its column count
    lines = md.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("| schema | model |"))
    header, rule = lines[at], lines[at + 1]
    assert len(markdown_html(f"{header}\n{rule}\n{table[0]}").split("<td>")) - 1 == header.count("|") - 1
    assert "<script>" not in (report / "report.html").read_text(encoding="utf-8")


def test_md_text_escapes_html_and_bars() -> None:
    assert md_text("a|b<i>->") == "a\\|b&lt;i>->"
    assert markdown_html("| x |\n|---|\n| " + md_text("a|<b>") + " |") == \
        "<table>\n<thead>\n<tr>\n<th>x</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>a|&lt;b&gt;</td>\n</tr>\n</tbody>\n</table>\n"
