"""The ledger checks content, not names (issue #59 item 1): a fold of parts
made against different contents of one dataset path, or a resume whose
dataset changed under the same ids, is refused in one line naming the item
(or dataset) and both sources; a damaged ``grown`` note is one line too
(item 6). Scripted backend, the real ``custom`` task."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
import runfakes

from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.records.replay_file import read_replay
from conformbench.records.spec import RunSpec
from conformbench.runner.ledger import Shard, shard_files
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec


def _dataset(path: Path, offset: int) -> Path:
    rows = [{"id": f"q{i}", "question": f"What is {i + offset} + 1?", "answer": str(i + offset + 1)}
            for i in range(8)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _args(out: Path, dataset: Path, *more: str) -> list[str]:
    return ["run", "--task", "custom", "--dataset", str(dataset), "--backend", "fake", "--arm", "unconstrained",
            "--no-canary", "--quiet", "--out", str(out), *more]


def _cli(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(args)
    return code, err.getvalue()


def _spec(out: Path, dataset: Path) -> RunSpec:
    data = runfakes.fake_spec(out)
    data["tasks"] = [{"name": "custom", "dataset": str(dataset), "arms": ["unconstrained"]}]
    return parse_spec(data)


def test_a_fold_of_parts_made_against_other_contents_is_refused_in_one_line(tmp_path: Path) -> None:
    """The issue's case: part 1, then the same path gets other questions
    under the same ids, part 2, then the fold: exit 2, nothing folded."""
    out, data = tmp_path / "out", tmp_path / "qa.jsonl"
    _dataset(data, 0)
    assert _cli(_args(out, data, "--shard", "1/2"))[0] == 0
    _dataset(data, 100)
    assert _cli(_args(out, data, "--shard", "2/2"))[0] == 0
    code, err = _cli(_args(out, data))
    assert code == 2, err
    line = err.strip()
    assert "\n" not in line and "replay.shard-1-of-2.jsonl" in line and "qa.jsonl" in line, err
    assert len(shard_files(out)) == 2 and not (out / "replay.jsonl").exists()


def test_a_part_whose_items_differ_from_the_plan_is_refused_without_digests(tmp_path: Path) -> None:
    """A part made before digests were recorded (none in its header): the
    item records themselves are compared with the plan's."""
    out, data = tmp_path / "out", tmp_path / "qa.jsonl"
    _dataset(data, 0)
    execute(_spec(out, data), shard=Shard(1, 2))
    part = shard_files(out)[0]
    lines = part.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    del header["spec"]["tasks"][0]["dataset_sha256"]
    part.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    _dataset(data, 100)
    with pytest.raises(UsageError, match=r"item 'q\d' of task 'custom' differs between .*shard-1-of-2.jsonl and "
                                         r"the plan"):
        execute(_spec(out, data))


def test_a_resume_whose_dataset_changed_under_the_same_ids_is_refused(tmp_path: Path) -> None:
    out, data = tmp_path / "out", tmp_path / "qa.jsonl"
    _dataset(data, 0)
    assert _cli(_args(out, data))[0] == 0
    before = (out / "replay.jsonl").read_bytes()
    _dataset(data, 100)
    code, err = _cli(_args(out, data))
    assert code == 2 and "\n" not in err.strip(), err
    assert re.search(r"the dataset .*qa.jsonl is not the content .*replay.jsonl was made with", err), err
    assert (out / "replay.jsonl").read_bytes() == before


def test_a_resume_checks_the_items_when_the_header_has_no_digest(tmp_path: Path) -> None:
    out, data = tmp_path / "out", tmp_path / "qa.jsonl"
    _dataset(data, 0)
    execute(_spec(out, data))
    replay = out / "replay.jsonl"
    lines = replay.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    assert header["spec"]["tasks"][0]["dataset_sha256"]  # recorded beside the path
    del header["spec"]["tasks"][0]["dataset_sha256"]
    replay.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    assert execute(_spec(out, data)).generated == 0  # the same content: resumed
    _dataset(data, 100)
    with pytest.raises(UsageError, match=r"item 'q\d' of task 'custom' differs between .*replay.jsonl and the "
                                         r"plan"):
        execute(_spec(out, data))


def test_a_header_without_a_dataset_records_no_digest(tmp_path: Path) -> None:
    execute(parse_spec(runfakes.fake_spec(tmp_path, n=2)))
    first = (tmp_path / "replay.jsonl").read_bytes().split(b"\n")[0]
    assert b"dataset_sha256" not in first
    assert read_replay(tmp_path / "replay.jsonl").header.spec.tasks[0].dataset_sha256 is None


@pytest.mark.parametrize("facts", ["not json", "[1, 2]", "{" * 100_000], ids=["text", "list", "deep"])
def test_a_grown_note_that_is_no_json_object_is_one_line(tmp_path: Path, facts: str) -> None:
    """Issue #59 item 6: a replay whose build note is not JSON crashed the resume."""
    out, data = tmp_path / "out", tmp_path / "qa.jsonl"
    _dataset(data, 0)
    assert _cli(_args(out, data))[0] == 0
    replay = out / "replay.jsonl"
    lines = replay.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["grown"] = [f"2026-01-01T00:00:00+00:00: generations from here on were made on another build: {facts}"]
    replay.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    code, err = _cli(_args(out, data))
    assert code == 2, err
    assert "\n" not in err.strip() and "grown note 1" in err and "damaged" in err, err


def test_reproduce_says_when_the_dataset_given_is_not_the_replays(tmp_path: Path) -> None:
    from conformbench.runner.ledger import ReproduceChoices, reproduction_spec
    from conformbench.runner.ledger.content import dataset_digest

    data = _dataset(tmp_path / "qa.jsonl", 0)
    recorded = RunSpec.model_validate({"models": [{"label": "m"}], "tasks": [
        {"name": "custom", "dataset": "/elsewhere/qa.jsonl", "dataset_sha256": dataset_digest(str(data))}]})
    assert reproduction_spec(recorded, ReproduceChoices(dataset=data))[1] == [
        f"task 'custom': --dataset {data} (the replay's: '/elsewhere/qa.jsonl')"]
    _dataset(data, 100)
    notes = reproduction_spec(recorded, ReproduceChoices(dataset=data))[1]
    assert len(notes) == 2 and "the dataset's content is not the replay's" in notes[1], notes
