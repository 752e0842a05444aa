"""Formats as annotations (JSON Schema 2020-12's default, and the ConCodeEval
paper's) or asserted (--format-assertion): the tasks' scores, the validation
targets, and what the reports say, on real items of the shipped replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.records.items import Condition, Item, TaskOptions
from conformbench.records.replay_file import read_replay
from conformbench.reports.rescore import score_replays
from conformbench.tasks.concodeeval.generation import GenerationTask
from conformbench.tasks.concodeeval.shots import object_schema
from conformbench.tasks.concodeeval.validation import ValidationTask
from conformbench.validator.schema_validator import validator_for

SHIPPED = (Path(__file__).resolve().parents[2] / "src" / "conformbench" / "data" / "replays"
           / "concodeeval-validation.jsonl")
SCHEMA = {"type": "object", "properties": {"mail": {"type": "string", "format": "idn-email"},
                                           "n": {"type": "integer", "maximum": 3}}}
PLAIN = Condition.of("unconstrained", None, None, {"schema_format": "json", "output_format": "json", "shots": 0})


def _options(asserted: bool) -> TaskOptions:
    return TaskOptions(axes={"schema_formats": ("json",)}, format_assertion=asserted)


def test_generation_fails_a_sample_for_its_format_only_when_asserted() -> None:
    item = Item("cc_x", {"schema_id": "x", "schema": SCHEMA})
    cond = Condition.of("prompt_only", "schema", None, {"schema_format": "json", "output_format": "json", "shots": 0})
    text = '{"mail": "hchavezexample.org", "n": 2}'  # the paper's own idn-email sample
    assert GenerationTask(_options(False)).score(item, cond, text, False).correct is True
    asserted = GenerationTask(_options(True)).score(item, cond, text, False)
    assert asserted.correct is False and [v.keyword for v in asserted.violations] == ["format"]


@pytest.mark.parametrize(("instance", "annotated", "asserted"), [
    ({"mail": "hchavezexample.org", "n": 2}, "yes", "no"),  # breaks only format
    ({"mail": "hchavezexample.org", "n": 9}, "no", "no"),  # breaks maximum too
])
def test_validation_target_follows_the_format_mode(instance: object, annotated: str, asserted: str) -> None:
    item = Item("x:format", {"schema_id": "x", "schema": SCHEMA, "instance": instance}, "no")
    loose = ValidationTask(_options(False)).score(item, PLAIN, "yes", False)
    assert loose.label == annotated and loose.correct is (annotated == "yes")
    assert (loose.note is not None) is (annotated != "no")
    strict = ValidationTask(_options(True)).score(item, PLAIN, "yes", False)
    assert strict.label == asserted and strict.correct is False and strict.note is None


def test_shipped_items_relabelled_are_exactly_those_breaking_only_format() -> None:
    task = ValidationTask(_options(False))
    items = [rec.item for rec in read_replay(SHIPPED).items]
    relabelled = {i.id for i in items if task.target_of(i) != i.target}
    only_format = {i.id for i in items if i.target == "no"
                   and {v.keyword for v in validator_for(object_schema(i.input["schema"]))
                        .violations(i.input["instance"])} == {"format"}}
    assert relabelled == only_format and relabelled
    assert all(task.target_of(i) == i.target for i in items if i.target == "yes")
    assert all(ValidationTask(_options(True)).target_of(i) == i.target for i in items)


def _small_replay(tmp_path: Path, schema_ids: set[str]) -> Path:
    """The shipped replay cut to a few schemas: its header, models, those
    schemas' items and every generation of them."""
    keep = []
    for line in SHIPPED.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["kind"] == "item" and rec["item"]["input"]["schema_id"] not in schema_ids:
            continue
        if rec["kind"] == "generation" and rec["item_id"].split(":")[0] not in schema_ids:
            continue
        keep.append(line)
    path = tmp_path / "replay.jsonl"
    path.write_text("\n".join(keep) + "\n", encoding="utf-8")
    return path


def test_reports_state_the_mode_and_the_relabelled_items(tmp_path: Path) -> None:
    replay = _small_replay(tmp_path, {"gen-0008", "gen-0001"})
    annotated = score_replays([replay])
    asserted = score_replays([replay], format_assertion=True)
    assert (annotated.format_mode, asserted.format_mode) == ("annotate", "assert")
    (section,) = [s for s in annotated.results[0].sections if s.name == "concodeeval_validation"]
    assert section.data["relabelled"] == ["gen-0008:format"]
    (strict,) = [s for s in asserted.results[0].sections if s.name == "concodeeval_validation"]
    assert strict.data["relabelled"] == []
    assert main(["score", str(replay), "--out", str(tmp_path / "a"), "--quiet"]) == 0
    assert main(["score", str(replay), "--out", str(tmp_path / "b"), "--quiet", "--format-assertion"]) == 0
    md_a = (tmp_path / "a" / "report.md").read_text(encoding="utf-8")
    md_b = (tmp_path / "b" / "report.md").read_text(encoding="utf-8")
    assert "formats: annotations (JSON Schema 2020-12's default" in md_a
    assert "1 item(s) scored against that rather than the dataset's 'no' (gen-0008:format)" in md_a
    assert "formats: asserted (--format-assertion)" in md_b and "formats: annotations" not in md_b
    html = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    assert "formats: annotations" in html and "gen-0008:format" in html
    report = json.loads((tmp_path / "a" / "report.json").read_text(encoding="utf-8"))
    assert report["format_mode"] == "annotate"
    # the one relabelled item moves the plain answers' accuracy, nothing else changes
    acc_a = {a.key: a.accuracy.k for a in annotated.results[0].arms if a.accuracy}
    acc_b = {a.key: a.accuracy.k for a in asserted.results[0].arms if a.accuracy}
    assert acc_a.keys() == acc_b.keys() and acc_a != acc_b
    assert all(abs(acc_a[k] - acc_b[k]) <= 1 for k in acc_a)
