"""Adding arms (contracts, engines, formats) to a finished run: the recorded
conditions' generations are reused untouched, only the new conditions' are
generated, a new arm's turn identical to a recorded one is shared as in a
fresh run, and removing an arm or changing another key is refused
(scripted backend; the real-model check is test_grow_arms_model.py)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
import runfakes

from conformbench.errors import UsageError
from conformbench.records.replay_file import read_replay
from conformbench.reports.rescore import loaded_replays
from conformbench.runner.run import build_plans, execute
from conformbench.runner.spec import parse_spec
from conformbench.schemas.build import BuildOptions, build_dataset


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    runfakes.CALLS.clear()


def _run(out: Path, arms: list[str], n: int = 3, **task: Any) -> Any:
    runfakes.CALLS.clear()
    return execute(parse_spec(runfakes.fake_spec(out, n=n, arms=arms, **task)))


def _lines(out: Path) -> list[bytes]:
    return (out / "replay.jsonl").read_bytes().splitlines()


def _generations(out: Path, arm: str) -> list[bytes]:
    """The raw lines of the replay's generations of ``arm``."""
    return [line for line in _lines(out)
            if json.loads(line).get("kind") == "generation" and json.loads(line)["condition"]["arm"] == arm]


def _sent_arms() -> list[str]:
    """The arm of each prompt sent (a repair turn's feedback: "repair")."""
    sent = []
    for request in runfakes.CALLS.requests:
        last = request.prompt.messages[-1].content
        sent.append("repair" if runfakes.FEEDBACK in last else json.loads(last)["arm"])
    return sent


def test_an_added_arm_generates_only_its_own_answers(tmp_path: Path) -> None:
    _run(tmp_path, ["constrained"])
    before = _generations(tmp_path, "constrained")
    summary = _run(tmp_path, ["constrained", "prompt_only"])
    assert summary.generated == 3 and summary.skipped == 3
    assert _sent_arms() == ["prompt_only"] * 3
    assert _generations(tmp_path, "constrained") == before  # byte for byte
    replay = read_replay(tmp_path / "replay.jsonl")
    assert replay.header.spec.tasks[0].arms == ["constrained", "prompt_only"]
    assert len(replay.header.grown) == 1
    assert "task 'fake-qa' arms added: prompt_only (1 new condition)" in replay.header.grown[0]
    assert summary.growth_notes == ["task 'fake-qa' arms added: prompt_only (1 new condition)"]
    again = _run(tmp_path, ["constrained", "prompt_only"])
    assert again.generated == 0 and not runfakes.CALLS.requests
    assert len(read_replay(tmp_path / "replay.jsonl").header.grown) == 1
    loaded = loaded_replays([tmp_path / "replay.jsonl"]).tables[0]
    assert {c.arm for c in loaded.table.conditions} == {"constrained", "prompt_only"}
    assert not loaded.exclusions


def test_a_grown_replay_keeps_its_file_mode(tmp_path: Path) -> None:
    """Growth rewrites the header through a temporary file; the replay keeps
    its mode (it became mkstemp's 0600, unreadable to the user's group)."""
    _run(tmp_path, ["constrained"])
    replay = tmp_path / "replay.jsonl"
    replay.chmod(0o644)
    _run(tmp_path, ["constrained", "prompt_only"])
    assert len(read_replay(replay).header.grown) == 1
    assert stat.S_IMODE(replay.stat().st_mode) == 0o644


def _gsm8k(out: Path, arms: list[str]) -> Any:
    return parse_spec({"models": [{"label": "m", "backend": "fake"}],
                       "tasks": [{"name": "gsm8k", "n": 2, "arms": arms}],
                       "out": str(out), "canary": False, "quiet": True})


def test_an_added_contract_is_an_added_arm(tmp_path: Path) -> None:
    execute(_gsm8k(tmp_path, ["constrained[answer]"]))
    before = _generations(tmp_path, "constrained")
    runfakes.CALLS.clear()
    summary = execute(_gsm8k(tmp_path, ["constrained[answer]", "prompt_only[answer]"]))
    assert summary.generated == 2 and len(runfakes.CALLS.requests) == 2
    assert all(r.constraint is None for r in runfakes.CALLS.requests)
    assert _generations(tmp_path, "constrained") == before
    assert "arms added: prompt_only[answer]" in read_replay(tmp_path / "replay.jsonl").header.grown[0]


def _fresh(out: Path, arms: list[str]) -> dict[tuple[str, str, str, str], Any]:
    _run(out, arms)
    return {g.key: g for g in read_replay(out / "replay.jsonl").generations}


def _same_as_fresh(grown: dict[Any, Any], fresh: dict[Any, Any]) -> None:
    assert grown.keys() == fresh.keys()
    for key, gen in grown.items():
        assert gen.model_dump(exclude={"seconds"}) == fresh[key].model_dump(exclude={"seconds"}), key


def test_an_added_unconstrained_arm_takes_the_recorded_free_step(tmp_path: Path) -> None:
    _run(tmp_path / "grown", ["reason_then_constrain"])
    summary = _run(tmp_path / "grown", ["reason_then_constrain", "unconstrained"])
    assert summary.generated == 3 and not runfakes.CALLS.requests  # every free turn was recorded
    grown = {g.key: g for g in read_replay(tmp_path / "grown/replay.jsonl").generations}
    _same_as_fresh(grown, _fresh(tmp_path / "fresh", ["reason_then_constrain", "unconstrained"]))
    assert all(g.shared is None for g in grown.values())  # its own answer, as a fresh run writes it


def test_an_added_two_turn_arm_takes_the_recorded_answer_as_its_step(tmp_path: Path) -> None:
    _run(tmp_path / "grown", ["unconstrained"])
    summary = _run(tmp_path / "grown", ["unconstrained", "reason_then_constrain"])
    assert summary.generated == 3 and _sent_arms() == ["package"] * 3
    grown = {g.key: g for g in read_replay(tmp_path / "grown/replay.jsonl").generations}
    _same_as_fresh(grown, _fresh(tmp_path / "fresh", ["unconstrained", "reason_then_constrain"]))


def test_an_added_repair_arm_shares_the_recorded_first_round(tmp_path: Path) -> None:
    _run(tmp_path / "grown", ["prompt_only"])
    summary = _run(tmp_path / "grown", ["prompt_only", "repair"])
    # the first round is prompt_only's answer; only the wrong ones are repaired
    assert "prompt_only" not in _sent_arms() and summary.generated >= 3
    replay = read_replay(tmp_path / "grown/replay.jsonl")
    assert replay.header.spec.decoding.max_rounds is not None  # the round limit a repair run records
    grown = {g.key: g for g in replay.generations}
    _same_as_fresh(grown, _fresh(tmp_path / "fresh", ["prompt_only", "repair"]))
    assert _run(tmp_path / "grown", ["prompt_only", "repair"]).generated == 0


def test_a_step_of_unknown_cost_is_generated_again_for_an_answer(tmp_path: Path) -> None:
    """A replay made before steps' costs were recorded: the new answer
    cannot say what it cost, so it is generated (its record would say 0)."""
    _run(tmp_path, ["reason_then_constrain"])
    path = tmp_path / "replay.jsonl"
    old = [json.loads(line) for line in path.read_bytes().splitlines()]
    for rec in old:
        rec.pop("step", None)
    path.write_text("".join(json.dumps(r) + "\n" for r in old))
    summary = _run(tmp_path, ["reason_then_constrain", "unconstrained"])
    assert summary.generated == 3 and _sent_arms() == ["unconstrained"] * 3
    new = [g for g in read_replay(path).generations if g.condition.arm == "unconstrained"]
    assert all(g.shared is None and g.completion_tokens > 0 for g in new)


def test_removing_an_arm_is_refused_and_says_what_differs(tmp_path: Path) -> None:
    _run(tmp_path, ["constrained", "prompt_only"])
    with pytest.raises(UsageError, match=r"different spec \(tasks\[0\]\.arms: .*prompt_only.* in the replay"):
        _run(tmp_path, ["constrained"])
    with pytest.raises(UsageError, match="different spec"):  # one removed, one added
        _run(tmp_path, ["constrained", "unconstrained"])


def test_an_added_arm_with_another_change_is_refused(tmp_path: Path) -> None:
    _run(tmp_path, ["constrained"])
    with pytest.raises(UsageError, match=r"different spec \(.*tasks\[0\]\.seed: 0 in the replay, 1 now"):
        _run(tmp_path, ["constrained", "prompt_only"], seed=1)
    assert read_replay(tmp_path / "replay.jsonl").header.spec.tasks[0].arms == ["constrained"]


def test_reordered_arms_are_still_a_different_spec(tmp_path: Path) -> None:
    _run(tmp_path, ["constrained", "prompt_only"])
    with pytest.raises(UsageError, match="different spec"):
        _run(tmp_path, ["prompt_only", "constrained"])


def test_reordered_arms_with_an_added_one_are_still_a_different_spec(tmp_path: Path) -> None:
    """Issue #59 item 10: adding an arm while reordering the recorded ones
    was accepted as growth, though the reordering alone is refused."""
    _run(tmp_path, ["constrained", "prompt_only"])
    before = (tmp_path / "replay.jsonl").read_bytes()
    with pytest.raises(UsageError, match="different spec"):
        _run(tmp_path, ["prompt_only", "constrained", "unconstrained"])
    assert (tmp_path / "replay.jsonl").read_bytes() == before


def test_an_arm_and_more_items_grow_together(tmp_path: Path) -> None:
    _run(tmp_path, ["constrained"], n=2)
    summary = _run(tmp_path, ["constrained", "prompt_only"], n=3)
    assert summary.grown == {"fake-qa": (2, 3)}
    assert summary.generated == 4  # prompt_only on 3 items, constrained on the third
    assert sorted(_sent_arms()) == ["constrained"] + ["prompt_only"] * 3


@pytest.fixture(scope="module")
def concodeeval_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("concodeeval-dataset")
    build_dataset(BuildOptions(out=out, n=4, seed=3))
    return out


def _two_tasks(out: Path, dataset: Path, qa_arms: list[str]) -> Any:
    data = runfakes.fake_spec(out, n=2, arms=qa_arms)
    data["tasks"].append({"name": "generation", "n": 2, "dataset": str(dataset), "arms": ["prompt_only"],
                          "schema_formats": ["json", "yaml"], "output_formats": ["json"]})
    return parse_spec(data)


def test_an_arm_added_to_one_task_of_several(tmp_path: Path, concodeeval_dataset: Path) -> None:
    execute(_two_tasks(tmp_path, concodeeval_dataset, ["constrained"]))
    before = _generations(tmp_path, "constrained") + _generations(tmp_path, "prompt_only")
    runfakes.CALLS.clear()
    summary = execute(_two_tasks(tmp_path, concodeeval_dataset, ["constrained", "prompt_only"]))
    assert summary.generated == 2 and _sent_arms() == ["prompt_only"] * 2
    assert summary.growth_notes == ["task 'fake-qa' arms added: prompt_only (1 new condition)"]
    after = _generations(tmp_path, "constrained") + _generations(tmp_path, "prompt_only")
    assert after[:len(before)] == before
    assert execute(_two_tasks(tmp_path, concodeeval_dataset, ["constrained", "prompt_only"])).generated == 0


def _cells(out: Path, dataset: Path, task: str, arms: list[str], engines: list[str] | None = None) -> Any:
    cell: dict[str, Any] = {"name": task, "n": 2, "dataset": str(dataset), "arms": arms,
                            "schema_formats": ["json", "yaml"], "output_formats": ["json", "yaml"]}
    if engines:
        cell["engines"] = engines
    return parse_spec({"models": [{"label": "m", "backend": "fake"}], "tasks": [cell],
                       "out": str(out), "canary": False, "quiet": True})


@pytest.mark.parametrize("task", ["generation", "validation"])
def test_an_arm_added_to_a_concodeeval_task_adds_its_cells(tmp_path: Path, concodeeval_dataset: Path,
                                                           task: str) -> None:
    execute(_cells(tmp_path, concodeeval_dataset, task, ["prompt_only"]))
    before = read_replay(tmp_path / "replay.jsonl")
    runfakes.CALLS.clear()
    spec = _cells(tmp_path, concodeeval_dataset, task, ["prompt_only", "constrained"])
    old_cells = {g.condition.key for g in before.generations}
    plan = build_plans(spec)[0]
    new_cells = [c for c in plan.conditions if c.key not in old_cells]
    assert new_cells and all(c.arm == "constrained" for c in new_cells)
    summary = execute(spec)
    assert summary.generated == len(plan.items) * len(new_cells)
    assert summary.skipped == len(before.generations)
    after = read_replay(tmp_path / "replay.jsonl")
    assert after.generations[:len(before.generations)] == before.generations
    assert f"({len(new_cells)} new conditions)" in after.header.grown[-1]
    assert execute(spec).generated == 0


def test_an_added_engine_adds_the_constrained_cells(tmp_path: Path, concodeeval_dataset: Path) -> None:
    execute(_cells(tmp_path, concodeeval_dataset, "generation", ["constrained"], ["llguidance"]))
    first = len(read_replay(tmp_path / "replay.jsonl").generations)
    spec = _cells(tmp_path, concodeeval_dataset, "generation", ["constrained"], ["llguidance", "xgrammar"])
    summary = execute(spec)
    assert summary.generated == first  # as many cells again, under the new engine
    replay = read_replay(tmp_path / "replay.jsonl")
    assert {g.condition.engine for g in replay.generations[first:]} == {"xgrammar"}
    assert "engines added: xgrammar" in replay.header.grown[-1]


def test_the_python_api_grows_a_run_by_an_arm(tmp_path: Path) -> None:
    import conformbench

    def run(*arms: str) -> Any:
        runfakes.CALLS.clear()
        return conformbench.run(tasks=["gsm8k"], n=2, arms=list(arms), backend="fake", no_canary=True,
                                quiet=True, out=str(tmp_path))

    run("constrained[answer]")
    before = _generations(tmp_path, "constrained")
    done = run("constrained[answer]", "prompt_only[answer]")
    assert done.generation.generated == 2 and len(runfakes.CALLS.requests) == 2
    assert _generations(tmp_path, "constrained") == before
    assert done.generation.growth_notes == ["task 'gsm8k' arms added: prompt_only[answer] (1 new condition)"]
    with pytest.raises(UsageError, match="different spec"):
        run("prompt_only[answer]")
    assert run("constrained[answer]", "prompt_only[answer]").generation.generated == 0
