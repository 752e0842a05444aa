"""``import_validbutwrong``: validbutwrong 0.1.1's two committed replays
become conformbench replays whose scores match validbutwrong's own report
(``validbutwrong run --task T``, the installed package, a test extra) arm by
arm: GSM8K exactly, BFCL up to the checker differences listed here and in
docs/tasks.md. Test data: tests/data/validbutwrong (copies, MIT)."""

from __future__ import annotations

import contextlib
import io
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.importers.validbutwrong import (
    condition_of,
    import_validbutwrong,
    read_validbutwrong,
)
from conformbench.records.items import Condition
from conformbench.records.replay_file import read_replay

DATA = Path(__file__).resolve().parents[1] / "data" / "validbutwrong"
TASKS = ("gsm8k", "bfcl-simple")

POSITIONAL = ("positional arguments: validbutwrong maps them to parameters in declared order; "
              "the official checker ignores them, so a required parameter is missing")
INT_IN_FLOAT_ARRAY = ("integers in an array of float: validbutwrong compares numbers; the official "
                      "checker's element type check wants float")
BARE_NAME = ("a bare name (data=my_data): validbutwrong cannot read the call; the official "
             "checker reads the name as a string, which is the possible answer")
#: (item, validbutwrong arm) -> why its AST match differs from ours (= the official checker's)
BFCL_CHECKER_DIFFERENCES: dict[tuple[str, str], str] = {
    **{(item, "unconstrained"): POSITIONAL
       for item in ("simple_1", "simple_2", "simple_19", "simple_24", "simple_30")},
    **{(item, arm): INT_IN_FLOAT_ARRAY
       for item, arms in (("simple_13", ("unconstrained", "constrained", "reason_then_constrain")),
                          ("simple_82", ("unconstrained", "constrained", "reason_then_constrain")),
                          ("simple_103", ("constrained", "reason_then_constrain")),
                          ("simple_87", ("reason_then_constrain",)))
       for arm in (a if a == "unconstrained" else f"{a}[arguments]" for a in arms)},
    ("simple_109", "unconstrained"): BARE_NAME,
    ("simple_182", "unconstrained"): BARE_NAME,
}


def _ours(report: dict[str, Any], task: str) -> dict[str, Any]:
    (result,) = [r for r in report["results"] if r["task"] == task]
    return result


def _key(vbw_key: str) -> str:
    return condition_of(vbw_key, "outlines").arm_key


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Both replays imported and scored with ``conformbench score``."""
    root = tmp_path_factory.mktemp("imported")
    replays = []
    for task in TASKS:
        summary = import_validbutwrong(DATA / f"{task}.jsonl", root / task)
        replays.append(str(summary.replay))
    assert main(["score", *replays, "--out", str(root / "reports"), "--quiet"]) == 0
    report: dict[str, Any] = json.loads((root / "reports" / "report.json").read_text(encoding="utf-8"))
    return {"root": root, "report": report}


@pytest.fixture(scope="module")
def theirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """validbutwrong's own report.json for each replay."""
    cli = pytest.importorskip("validbutwrong.cli")
    root = tmp_path_factory.mktemp("validbutwrong")
    out: dict[str, dict[str, Any]] = {}
    for task in TASKS:
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(["run", "--task", task, "--replay", str(DATA / f"{task}.jsonl"),
                             "--out", str(root / task)])
        assert code == 0
        out[task] = json.loads((root / task / "report.json").read_text(encoding="utf-8"))
    return out


def _ledger_differences(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    mine = {row["item_id"]: row["states"] for row in ours["ledger"]}
    assert set(mine) == {row["id"] for row in theirs["ledger"]}
    differ = {}
    for row in theirs["ledger"]:
        for key, state in row.items():
            if key != "id" and mine[row["id"]][_key(key)] != state:
                differ[(row["id"], key)] = (state, mine[row["id"]][_key(key)])
    return differ


@pytest.mark.long
def test_gsm8k_scores_match_validbutwrong_exactly(imported: dict[str, Any],
                                                  theirs: dict[str, dict[str, Any]]) -> None:
    ours, vbw = _ours(imported["report"], "gsm8k"), theirs["gsm8k"]
    assert ours["n"] == vbw["n"] == 200
    arms = {arm["key"]: arm for arm in ours["arms"]}
    assert set(arms) == {_key(k) for k in vbw["arms"]}
    for key, their_arm in vbw["arms"].items():
        arm = arms[_key(key)]
        for ours_name, their_name in (("validity", "schema_validity"), ("accuracy", "answer_accuracy"),
                                      ("wrong_but_valid", "wrong_but_valid")):
            mine, other = arm[ours_name], their_arm[their_name]
            assert (mine is None) == (other is None), (key, ours_name)
            if mine is not None:
                assert mine["k"] / mine["n"] == other["rate"], (key, ours_name)
        assert arm["quadrants"] == their_arm["quadrant"], key
    assert _ledger_differences(ours, vbw) == {}


@pytest.mark.long
def test_bfcl_scores_match_up_to_the_documented_checker_differences(
        imported: dict[str, Any], theirs: dict[str, dict[str, Any]]) -> None:
    ours, vbw = _ours(imported["report"], "bfcl-simple"), theirs["bfcl-simple"]
    differ = _ledger_differences(ours, vbw)
    assert set(differ) == set(BFCL_CHECKER_DIFFERENCES)
    for (item, key), (their_state, our_state) in differ.items():
        # validity always agrees; only the AST verdict differs
        assert their_state.rsplit("/", 1)[0] == our_state.rsplit("/", 1)[0], (item, key)
    arms = {arm["key"]: arm for arm in ours["arms"]}
    for key, their_arm in vbw["arms"].items():
        swing = sum((1 if s[1].endswith("right") else -1)
                    for (_, k), s in differ.items() if k == key)
        mine = arms[_key(key)]["accuracy"]
        assert mine["k"] == round(their_arm["answer_accuracy"]["rate"] * 200) + swing, key
        if their_arm["schema_validity"] is not None:
            assert arms[_key(key)]["validity"]["k"] / 200 == their_arm["schema_validity"]["rate"]


def test_prompts_are_the_ones_validbutwrong_sent(imported: dict[str, Any]) -> None:
    cli = pytest.importorskip("validbutwrong.cli")
    for task in TASKS:
        their_task = cli.make_task(task)
        their_items = {item.id: item for item in their_task.items(200)}
        contents = read_replay(imported["root"] / task / "replay.jsonl")
        for gen in contents.generations:
            item = their_items[gen.item_id]
            schemas = their_task.schemas_for(item)
            sent = [m.content for m in gen.prompt.messages]
            if gen.condition.arm == "unconstrained":
                assert sent == [their_task.free_prompt(item)]
            elif gen.condition.arm == "reason_then_constrain":
                contract = str(gen.condition.contract)
                assert sent == [their_task.free_prompt(item), str(gen.free_text),
                                their_task.package_prompt(item, schemas[contract])]
            else:
                assert sent == [their_task.json_prompt(item, schemas[str(gen.condition.contract)])]


def test_what_the_import_keeps(imported: dict[str, Any]) -> None:
    contents = read_replay(imported["root"] / "gsm8k" / "replay.jsonl")
    (task,) = contents.header.spec.tasks
    assert task.params == {"prompt_style": "validbutwrong"} and task.engines == ["outlines"]
    assert task.max_tokens == 384 and contents.header.spec.decoding.max_tokens == 384
    (model,) = contents.models
    assert model.metadata["model_sha256"].startswith("74a4da8c")
    assert model.metadata["max_tokens_per_turn"] == {"free": 384, "json": 384, "package": 48}
    assert model.metadata["source_sha256"] == read_validbutwrong(DATA / "gsm8k.jsonl").sha256
    assert model.canary["outlines"]["passed"] is True
    by_arm: dict[str, list[Any]] = {}
    for gen in contents.generations:
        by_arm.setdefault(gen.condition.arm_key, []).append(gen)
    assert {k: len(v) for k, v in by_arm.items()} == dict.fromkeys(
        ["unconstrained", "prompt_only[answer]", "constrained[answer]@outlines",
         "prompt_only[reasoning]", "constrained[reasoning]@outlines",
         "reason_then_constrain[answer]@outlines"], 200)
    # its README: "22 of 200 GSM8K free text generations hit the 384 token cap"
    assert sum(g.finish_reason == "length" for g in by_arm["unconstrained"]) == 22
    free = {g.item_id: g.text for g in by_arm["unconstrained"]}
    assert all(g.free_text == free[g.item_id] for g in by_arm["reason_then_constrain[answer]@outlines"])


def test_import_is_deterministic_and_never_overwrites(tmp_path: Path, imported: dict[str, Any]) -> None:
    again = import_validbutwrong(DATA / "bfcl-simple.jsonl", tmp_path / "again")
    first = imported["root"] / "bfcl-simple" / "replay.jsonl"
    assert again.replay.read_bytes() == first.read_bytes()
    with pytest.raises(UsageError, match="already exists"):
        import_validbutwrong(DATA / "bfcl-simple.jsonl", tmp_path / "again")


def test_the_copies_are_the_packaged_replays() -> None:
    pytest.importorskip("validbutwrong")
    for task in TASKS:
        packaged = resources.files("validbutwrong") / "replays" / f"{task}.jsonl"
        assert packaged.read_bytes() == (DATA / f"{task}.jsonl").read_bytes()


def test_condition_of_every_arm_name() -> None:
    assert condition_of("unconstrained", "gbnf") == Condition("unconstrained")
    assert condition_of("prompt_json[answer]", "gbnf") == Condition("prompt_only", "answer")
    assert condition_of("constrained[answer]", "gbnf") == Condition("constrained", "answer", "gbnf")
    assert condition_of("reason_then_constrain[arguments]", "outlines") == Condition(
        "reason_then_constrain", "arguments", "outlines")
    for bad, why in (("promt_json[answer]", "did you mean 'prompt_json'"),
                     ("constrained", "names no schema"), ("constrained[]", "unknown"),
                     ("unconstrained[answer]", "cannot have a contract"), ("constrained[x", "unknown")):
        with pytest.raises(UsageError, match=why):
            condition_of(bad, "outlines")


def _edited(tmp_path: Path, edit: Any) -> Path:
    lines = (DATA / "gsm8k.jsonl").read_text(encoding="utf-8").splitlines()[:4]
    meta, records = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    edit(meta["meta"], records)
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [meta, *records]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("edit", "message"), [
    (lambda m, r: m.update(task="custom"), "task 'custom' cannot be imported"),
    (lambda m, r: m["engine"].update(engine="xgrammar"), "unknown validbutwrong engine 'xgrammar'"),
    (lambda m, r: r.reverse(), "not the first 3 gsm8k items"),
    (lambda m, r: r[0]["arms"].update({"prompt_jsn[answer]": {"text": ""}}), "did you mean"),
    (lambda m, r: r[1]["arms"]["unconstrained"].update(tokens=3), "arms.unconstrained.tokens"),
    (lambda m, r: m["max_tokens"].pop("package"), "no 'package' budget"),
    (lambda m, r: r.clear(), "holds no items"),
])
def test_malformed_replays_are_refused_with_a_reason(tmp_path: Path, edit: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        import_validbutwrong(_edited(tmp_path, edit), tmp_path / "out")
    assert not (tmp_path / "out" / "replay.jsonl").exists()


def test_files_that_are_not_validbutwrong_replays(tmp_path: Path) -> None:
    ours = Path(__file__).resolve().parents[1] / "reports" / "golden" / "replay.jsonl"
    cases = {"empty.jsonl": "", "text.jsonl": "not json\n", "ours.jsonl": ours.read_text(encoding="utf-8")}
    for name, text in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(UsageError, match="empty|not a JSON line|not a validbutwrong replay"):
            import_validbutwrong(tmp_path / name, tmp_path / "out")
    with pytest.raises(UsageError, match="cannot read"):
        import_validbutwrong(tmp_path / "missing.jsonl", tmp_path / "out")
