"""Every report file of a scored run, including run sections (analyses
across models): a two-model ConCodeEval run on the scripted backend, scored
from its replay."""

from __future__ import annotations

import json
from pathlib import Path

import runfakes

from conformbench.records.items import TaskOptions
from conformbench.reports.rescore import score_replays
from conformbench.reports.write import load_report, write_reports
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec
from conformbench.tasks.concodeeval.generation import GenerationTask
from conformbench.validator.schema_validator import validator_for

#: the generated schemas of n=3, seed 0 include const 80.43, so the model
#: answering 80.43 is right at least once
MODELS = {"sunny": "It is sunny.", "const": "80.43"}


def _rate_of_const() -> str:
    items = GenerationTask(TaskOptions(n=3, axes={"schema_formats": ("json",), "output_formats": ("json",)})).items()
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
        assert f"| {sf} | sunny | 0.0 |  |" in table  # a row whose best is 0 bolds nothing (#58)
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


def test_the_mask_toll_chart_is_a_file_and_inline_in_the_html(tmp_path: Path) -> None:
    """A result with the mask's toll section gets mask_toll.svg, the same
    chart inline in report.html; a rescoring without it removes a stale one."""
    from conformbench.records.results import SectionResult
    from conformbench.scoring.mask_chart import TollArm, TollData, TollGroup

    _two_model_report(tmp_path)
    run = score_replays([tmp_path / "replay.jsonl"])
    assert write_reports(run, tmp_path / "plain").mask_toll is None
    group = TollGroup(group="right", n=2, mean_share=0.5, mean_share_ci95=(0.1, 0.9), min_share=0.2,
                      min_share_ci95=(0.01, 0.7), refused_items=1, refused_items_ci95=(0.1, 0.9), steps=5,
                      refused_steps=1, first_refused_step=2, first_refused_at=[], quantiles=[0.4, 0.45, 0.5, 0.55, 0.6])
    data = TollData(arms=[TollArm(key="constrained[x]@llguidance", engine="llguidance", n=2, measured=2,
                                  groups=[group])])
    section = SectionResult(name="mask_toll", title="The mask's toll", data=data.model_dump(mode="json"))
    first = run.results[0]
    toll_run = run.model_copy(update={"results": [first.model_copy(update={"sections": [*first.sections, section]}),
                                                  *run.results[1:]]})
    files = write_reports(toll_run, tmp_path / "toll")
    assert files.mask_toll == tmp_path / "toll" / "mask_toll.svg" and files.mask_toll in files.all()
    svg = files.mask_toll.read_text(encoding="utf-8")
    assert f">{first.task} on {first.model}: the mask's toll</text>" in svg
    assert "mean allowed share 50.0% [10.0%, 90.0%]" in svg
    assert "mean allowed share 50.0% [10.0%, 90.0%]" in files.html.read_text(encoding="utf-8")
    write_reports(run, tmp_path / "toll")  # rescored without the section: no stale chart left
    assert not (tmp_path / "toll" / "mask_toll.svg").exists()
