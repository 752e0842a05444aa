"""Hostile model outputs through the scoring path: the real tasks' ``score``
and ``conformbench score`` on a replay holding them.

Guards: Task.score's promise never to raise on any text (and to bound its
time and memory, via the parsers' limits), a hostile sample scoring as
invalid with a stated reason, and the score command turning a replay full of
hostile texts (lone surrogates included, as JSON escapes) into a report
without crashing or dropping items.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from conformbench.records.items import Condition, Item, TaskOptions
from conformbench.records.replay import GenerationRecord, ItemRecord, ModelRecord, ReplayHeader
from conformbench.runner.spec import parse_spec
from conformbench.tasks.base import Task, tasks

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file

from hostile_corpus import BIG, CASES, HostileCase, Sandbox
from hostile_isolate import run_isolated

MAX_SECONDS = 5.0
MAX_PEAK_BYTES = 100 * 1024 * 1024
OUTPUTS = ("json", "yaml", "xml")
#: (task, options) with a contract, so that validity is defined
TASKS: dict[str, dict[str, Any]] = {
    "generation": {"n": 1, "schema_formats": ["json"], "output_formats": list(OUTPUTS)},
    "gsm8k": {"n": 1, "arms": ["prompt_only[answer]"]},
    "bfcl-simple": {"n": 1, "arms": ["prompt_only[arguments]"]},
}


@cache
def _task(name: str) -> tuple[Task, Item, tuple[Condition, ...]]:
    opts = TASKS[name]
    task = tasks.get(name)(TaskOptions(
        n=opts["n"], arms=tuple(opts.get("arms", ())),
        axes={"schema_formats": tuple(opts.get("schema_formats", ())),
              "output_formats": tuple(opts.get("output_formats", ()))},
    ))
    return task, task.items()[0], tuple(task.conditions())


def _format_of(condition: Condition) -> str:
    """The output format a condition asks for (the arm tasks answer JSON)."""
    return condition.text_axis("output_format") or "json"


@dataclass(frozen=True)
class _Scored:
    """An ItemScore in the shape run_isolated checks (ok / value / error)."""

    ok: bool
    value: Any
    error: str | None


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    return Sandbox.create(tmp_path_factory.mktemp("hostile-scoring"), port=9)


def _params() -> list[object]:
    return [pytest.param(case, name, id=f"{case.name}-{name}") for case in CASES for name in TASKS]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("case", "task_name"), _params())
def test_hostile_text_scores_invalid(case: HostileCase, task_name: str, sandbox: Sandbox) -> None:
    task, item, conditions = _task(task_name)
    text = case.build(sandbox)
    for condition in conditions:
        record = GenerationRecord(
            task=task.name, model="m", item_id=item.id, condition=condition,
            prompt=task.prompt(item, condition), text=text,
        )

        def scored(record: GenerationRecord = record) -> _Scored:
            s = task.score(item, record.condition, record.text, truncated=False)
            reason = s.note or "; ".join(f"{v.keyword} at {v.instance_path or '/'}" for v in s.violations)
            return _Scored(ok=s.valid is not False, value=s.answer, error=reason or None)

        outcome = run_isolated(scored, sandbox.marker)
        where = f"{task_name} {condition.key}"
        assert outcome.died is None, f"{where}: {outcome.died}"
        assert outcome.raised is None, f"{where}: score() raised:\n{outcome.raised}"
        assert not outcome.leaked, f"{where}: the secret reached the score"
        if _format_of(condition) in case.reject:
            assert outcome.ok is False, f"{where}: a hostile sample scored as valid"
            assert outcome.error and outcome.error.strip(), f"{where}: invalid without a reason"
        assert outcome.seconds < MAX_SECONDS, f"{where}: took {outcome.seconds:.1f} s"
        assert outcome.peak_bytes < MAX_PEAK_BYTES, f"{where}: peak {outcome.peak_bytes / 2**20:.0f} MiB"
    assert not sandbox.pwned.exists()


def _line(record: Any) -> str:
    # ensure_ascii: lone surrogates become \udcff escapes, as a hostile or
    # damaged replay would hold them
    return json.dumps(record.model_dump(mode="json"), ensure_ascii=True) + "\n"


def _hostile_replay(path: Path, sandbox: Sandbox) -> tuple[int, list[HostileCase]]:
    cases = [c for c in CASES if len(c.build(sandbox)) < BIG // 10]
    spec = parse_spec({
        "models": [{"label": "m", "backend": "replay", "model": str(path)}],
        "tasks": [{"name": name, **opts, "n": len(cases)} for name, opts in TASKS.items()],
    })
    lines = [_line(ReplayHeader(run_id="hostile", created="2025-01-01T00:00:00+00:00",
                                conformbench_version="0", spec=spec.replay_spec())),
             _line(ModelRecord(label="m", backend="replay", metadata={}))]
    count = 0
    for task_spec in spec.tasks:
        task = tasks.get(task_spec.name)(task_spec.options())
        items = task.items()
        assert len(items) == len(cases)
        for item, case in zip(items, cases):
            lines.append(_line(ItemRecord(task=task.name, item=item)))
            for condition in task.conditions():
                lines.append(_line(GenerationRecord(
                    task=task.name, model="m", item_id=item.id, condition=condition,
                    prompt=task.prompt(item, condition), text=case.build(sandbox),
                )))
                count += 1
    path.write_text("".join(lines), encoding="ascii")
    return count, cases


@pytest.mark.long
@pytest.mark.timeout(600)
def test_score_command_survives_a_hostile_replay(
    tmp_path: Path, sandbox: Sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformbench.cli.main import main

    replay = tmp_path / "replay.jsonl"
    _, cases = _hostile_replay(replay, sandbox)
    code = main(["score", str(replay), "--out", str(tmp_path / "report"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err[-3000:]
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert sandbox.marker not in json.dumps(report)
    for result in report["results"]:
        for arm in result["arms"]:
            assert arm["n"] == len(cases), f"{result['task']} {arm['key']}: items dropped"
            fmt = arm["condition"]["output_format"] or "json"
            if fmt == "json":  # every case is rejected by the JSON parser
                assert arm["validity"]["k"] == 0, f"{result['task']} {arm['key']}: hostile counted valid"
