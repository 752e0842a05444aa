"""Scoring params over a replay's (``--match`` on ``run`` and ``score``):
the recorded matcher given again is a no-op, never an error (issue #58: the
README's own ``run --task custom ... --match contains`` generated every
answer, then exited 2); another matcher rescores; a replay whose tasks take
no matcher is refused in one line. The live README line runs in
tests/test_readme_commands.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import conformbench
from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.importers.outputs import import_outputs
from conformbench.runner.shipped import shipped_replays

#: answers that are right by "contains" and by "exact" after the answer line is read
ROWS = [
    {"item": {"question": "Capital of France?", "answer": "Paris", "id": "q1"}, "text": "Answer: It is Paris."},
    {"item": {"question": "2+3?", "answer": "5", "id": "q2"}, "text": "Answer: 5"},
]


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    """A custom-task replay (outputs imported: no model), recorded with the default matcher, exact."""
    source = tmp_path / "outputs.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return import_outputs(source, "custom", tmp_path / "imported", model="m").replay


def _accuracy(folder: Path) -> tuple[int, int]:
    (arm,) = json.loads((folder / "report.json").read_text(encoding="utf-8"))["results"][0]["arms"]
    return arm["accuracy"]["k"], arm["accuracy"]["n"]


def _run(imported: Path, out: Path, match: str) -> conformbench.Published:
    """``run --task custom --match MATCH`` with the answers served from the
    imported replay (backend replay), so no model loads."""
    return conformbench.run(tasks=["custom"], dataset=str(imported.parent / "items.jsonl"), arms=["unconstrained"],
                            match=match, backend="replay", model=str(imported), no_canary=True, out=str(out),
                            quiet=True)


@pytest.fixture
def recorded(imported: Path, tmp_path: Path) -> Path:
    """A run's replay whose header records its matcher, contains."""
    _run(imported, tmp_path / "recorded", "contains")
    return tmp_path / "recorded" / "replay.jsonl"


def test_score_with_the_recorded_matcher_is_the_plain_score(recorded: Path, tmp_path: Path) -> None:
    conformbench.score(recorded, out=tmp_path / "plain")
    conformbench.score(recorded, out=tmp_path / "same", task_params={"match": "contains"})
    assert _accuracy(tmp_path / "same") == _accuracy(tmp_path / "plain") == (2, 2)


def test_score_with_another_matcher_rescores(recorded: Path, tmp_path: Path) -> None:
    conformbench.score(recorded, out=tmp_path / "exact", task_params={"match": "exact"})
    assert _accuracy(tmp_path / "exact") == (1, 2)


@pytest.mark.parametrize(("match", "right"), [("contains", 2), ("exact", 1)])
def test_score_match_on_the_command_line(recorded: Path, tmp_path: Path, match: str, right: int) -> None:
    """``score R --match X``: X the recorded matcher (contains), and another."""
    out = tmp_path / match
    assert main(["score", str(recorded), "--match", match, "--out", str(out), "--quiet"]) == 0
    assert _accuracy(out) == (right, 2)


@pytest.mark.parametrize(("match", "right"), [("exact", 1), ("contains", 2)])
def test_run_match_scores_its_own_generations(imported: Path, tmp_path: Path, match: str, right: int) -> None:
    """``run --match`` writes its report, with the default matcher (exact)
    and with another, and again when resumed with nothing left to make."""
    out = tmp_path / f"run-{match}"
    done = _run(imported, out, match)
    assert done.exit_code == 0 and _accuracy(out) == (right, 2)
    header = json.loads((out / "replay.jsonl").read_text(encoding="utf-8").split("\n")[0])
    assert header["spec"]["tasks"][0]["params"]["match"] == match
    # and again, resumed with nothing left to generate: the recorded matcher is still no error
    again = _run(imported, out, match)
    assert again.generation is not None and again.generation.skipped == 2 and _accuracy(out) == (right, 2)


def test_a_matcher_for_a_replay_without_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no task of the replay takes match \(custom does\)"):
        conformbench.score(shipped_replays()["gsm8k"], out=tmp_path / "x", task_params={"match": "exact"})
