"""Our BFCL verdicts against the official BFCL checker's, on every BFCL
generation of the shipped replay and of validbutwrong 0.1.1's replay.

The official verdicts are data (tests/tasks/bfcl/data/bfcl_official_verdicts.json,
provenance inside): bfcl-eval's own decoder and ast_checker were run once on
these generations outside the repository; no BFCL code is in it. This test
scores the same texts with our task and allows only the differences listed
here, each explained in docs/tasks.md ("Agreement with the official checker").
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from conformbench.importers.validbutwrong import condition_of, read_validbutwrong
from conformbench.records.items import Condition, Item, TaskOptions
from conformbench.records.replay_file import read_replay
from conformbench.tasks.base import tasks
from conformbench.tasks.bfcl.task import BfclSimpleTask

REPO = Path(__file__).resolve().parents[3]
VERDICTS = Path(__file__).resolve().parent / "data" / "bfcl_official_verdicts.json"
SHIPPED = "src/conformbench/data/replays/bfcl-simple.jsonl"
VBW = "tests/data/validbutwrong/bfcl-simple.jsonl"

#: (replay, item, arm) -> why we differ from the official verdict
DOCUMENTED: dict[tuple[str, str, str], str] = {
    (VBW, "simple_23", "prompt_json[arguments]"):
        "a fenced ```json block: read as the JSON inside here; json.loads of the whole "
        "reply fails officially",
}

Texts = dict[tuple[str, str], tuple[Condition, str]]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _conformbench_texts(path: Path) -> Texts:
    contents = read_replay(path)
    return {(g.item_id, g.condition.arm_key): (g.condition, g.text)
            for g in contents.generations if g.task == "bfcl-simple"}


def _validbutwrong_texts(path: Path) -> Texts:
    replay = read_validbutwrong(path)
    engine = replay.meta.engine.engine
    return {(record.id, key): (condition_of(key, engine), arm.text)
            for record in replay.records for key, arm in record.arms.items()}


def _task(style: str) -> BfclSimpleTask:
    task = tasks.get("bfcl-simple")(TaskOptions(params={"prompt_style": style}))
    assert isinstance(task, BfclSimpleTask)
    return task


@pytest.fixture(scope="module")
def official() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(VERDICTS.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def items() -> dict[str, Item]:
    return {item.id: item for item in _task("conformbench").items()}


def _disagreements(label: str, replay: dict[str, Any], items: dict[str, Item]) -> tuple[int, set[tuple[str, str, str]]]:
    vbw = replay["format"] == "validbutwrong"
    texts = (_validbutwrong_texts if vbw else _conformbench_texts)(REPO / label)
    task = _task("validbutwrong" if vbw else "conformbench")
    verdicts = [(item_id, key, v) for item_id, arms in replay["verdicts"].items()
                for key, v in arms.items()]
    # every generation of the replay has an official verdict, and no verdict is stale
    assert {(i, k) for i, k, _ in verdicts} == set(texts), label
    differ = set()
    for item_id, key, verdict in verdicts:
        condition, text = texts[(item_id, key)]
        assert _digest(text) == verdict["text_sha256"], (
            f"{label} {item_id} {key} changed since the official verdicts were made; "
            "recompute them as docs/tasks.md says")
        if task.score(items[item_id], condition, text, False).correct != verdict["correct"]:
            differ.add((label, item_id, key))
    return len(verdicts), differ


def test_our_verdicts_agree_with_the_official_checker(official: dict[str, Any],
                                                      items: dict[str, Item]) -> None:
    assert set(official["replays"]) == {SHIPPED, VBW}
    counted, differ = {}, set()
    for label, replay in official["replays"].items():
        counted[label], found = _disagreements(label, replay, items)
        differ |= found
    assert counted == {SHIPPED: 800, VBW: 800}
    assert differ == set(DOCUMENTED)


def test_the_official_verdicts_are_not_all_alike(official: dict[str, Any]) -> None:
    """The comparison would be empty if every verdict were 'wrong'."""
    for label, replay in official["replays"].items():
        right = sum(v["correct"] for arms in replay["verdicts"].values() for v in arms.values())
        assert 0 < right < 800, label
    assert official["provenance"]["package"].startswith("bfcl-eval ")


def test_bare_names_are_where_the_official_checker_and_we_now_agree(items: dict[str, Item]) -> None:
    """simple_109 and simple_182 of validbutwrong's replay: a variable name as
    a value, right by the official checker (it reads the name as a string)."""
    texts = _validbutwrong_texts(REPO / VBW)
    task = _task("validbutwrong")
    for item_id, fragment in (("simple_109", "data=my_data"), ("simple_182", "case_number=XYZ123")):
        condition, text = texts[(item_id, "unconstrained")]
        assert fragment in text
        assert task.score(items[item_id], condition, text, False).correct
