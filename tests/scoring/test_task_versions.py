"""A replay records each task's version (``Task.version``) in its header;
``score`` says when a replay was made with another version of its task, and
a resume refuses to mix the two (issue #61 item 6). Headers made before the
versions were recorded read, and score, as they always did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import runfakes

from conformbench.errors import UsageError
from conformbench.records.replay_file import read_replay
from conformbench.reports.rescore import score_replays
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec


def _run(out: Path) -> Path:
    execute(parse_spec(runfakes.fake_spec(out, n=2)))
    return out / "replay.jsonl"


def _with_versions(replay: Path, versions: dict[str, int] | None) -> None:
    lines = replay.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    if versions is None:
        header.pop("task_versions", None)
    else:
        header["task_versions"] = versions
    replay.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")


def test_the_header_records_each_tasks_version(tmp_path: Path) -> None:
    assert read_replay(_run(tmp_path)).header.task_versions == {"fake-qa": runfakes.FakeQaTask.version}


def test_score_says_a_replay_was_made_with_another_version(tmp_path: Path) -> None:
    replay = _run(tmp_path)
    assert not any("version" in w for r in score_replays([replay]).results for w in r.warnings)
    _with_versions(replay, {"fake-qa": runfakes.FakeQaTask.version + 1})
    (result,) = score_replays([replay]).results
    notes = [w for w in result.warnings if "version" in w]
    assert len(notes) == 1 and f"version {runfakes.FakeQaTask.version + 1} of task 'fake-qa'" in notes[0], notes


def test_a_header_without_versions_scores_as_before(tmp_path: Path) -> None:
    replay = _run(tmp_path)
    _with_versions(replay, None)
    assert b"task_versions" not in replay.read_bytes().split(b"\n")[0]
    assert read_replay(replay).header.task_versions == {}
    assert not any("version" in w for r in score_replays([replay]).results for w in r.warnings)


def test_a_resume_refuses_another_version_of_the_task(tmp_path: Path) -> None:
    replay = _run(tmp_path)
    _with_versions(replay, {"fake-qa": runfakes.FakeQaTask.version + 1})
    before = replay.read_bytes()
    with pytest.raises(UsageError, match=r"task 'fake-qa': .*replay.jsonl was made with version 2 of the task, "
                                         r"this conformbench has version 1"):
        execute(parse_spec(runfakes.fake_spec(tmp_path, n=2)))
    assert replay.read_bytes() == before
