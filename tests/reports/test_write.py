"""Every report file of a scored run, including run sections (analyses
across models): a two-model ConCodeEval run on the scripted backend, scored
from its replay."""

from __future__ import annotations

import json
from pathlib import Path

import runfakes

from conformbench.records.items import TaskOptions
from conformbench.reports.write import load_report, write_reports
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec
from conformbench.scoring.score import score_replays
from conformbench.tasks.concodeeval.generation import GenerationTask
from conformbench.validator.schema_validator import validator_for

#: the generated schemas of n=3, seed 0 include const 80.43, so the model
#: answering 80.43 is right at least once
MODELS = {"sunny": "It is sunny.", "const": "80.43"}


def _rate_of_const() -> str:
    items = GenerationTask(TaskOptions(n=3, schema_formats=("json",), output_formats=("json",))).items()
    right = sum(validator_for(i.input["schema"]).is_valid(80.43) for i in items)
    assert right >= 1
    return f"{100 * right / len(items):.1f}"


def _two_model_report(out: Path) -> Path:
    spec = {
        "models": [{"label": label, "backend": "fake", "extra": {"reply": reply}}
                   for label, reply in MODELS.items()],
        "tasks": [{"name": "generation", "n": 3, "schema_formats": ["json", "yaml"],
                   "output_formats": ["json"], "arms": ["prompt_only"]}],
        "decoding": {"max_tokens": 16},
        "out": str(out),
        "canary": False,
        "quiet": True,
    }
    execute(parse_spec(spec))
    write_reports(score_replays([out / "replay.jsonl"]), out / "report")
    return out / "report"


def test_the_cross_model_table_is_in_every_report_file(tmp_path: Path) -> None:
    report = _two_model_report(tmp_path)
    md = (report / "report.md").read_text(encoding="utf-8")
    heading = "## ConCodeEval across models (format efficacy, paper Table 1 layout)"
    assert md.count(heading) == 1
    table = md[md.index(heading):]
    assert "| schema | model | json Gen Acc | json Val Acc |" in table
    # 'const' is right on some samples in both schema-format rows; it wins each block
    rate = _rate_of_const()
    for sf in ("json", "yaml"):
        assert f"| {sf} | sunny | **0.0** |  |" in table
        assert f"| {sf} | const ▲ | **{rate}** |  |" in table
    assert table.index(heading) < table.index("## Run metadata")

    stored = json.loads((report / "report.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in stored["sections"]] == ["concodeeval_compare"]
    assert stored["sections"][0]["data"]["models"] == ["sunny", "const"]
    page = (report / "report.html").read_text(encoding="utf-8")
    assert "<h2>ConCodeEval across models" in page and "<td>const ▲</td>" in page
    # reloaded report.json renders the same section
    again = load_report(report / "report.json")
    assert again.sections == score_replays([tmp_path / "replay.jsonl"]).sections


def test_a_run_without_concodeeval_has_no_run_section(tmp_path: Path) -> None:
    execute(parse_spec(runfakes.fake_spec(tmp_path, n=2)))
    run = score_replays([tmp_path / "replay.jsonl"])
    assert run.sections == []
    md = (write_reports(run, tmp_path / "report").markdown).read_text(encoding="utf-8")
    assert "across models" not in md
