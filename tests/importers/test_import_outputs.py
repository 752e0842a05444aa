"""``import_outputs``: outputs generated elsewhere become a replay that
scores exactly like the run that made them. The outputs are the shipped
GSM8K replay's own texts (a real run of the embedded model), written as a
plain ``{"item_id", "text"}`` file per condition; scoring the imports must
give the shipped run's rates, quadrants and ledger for those conditions."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

import conformbench
from conformbench.errors import UsageError
from conformbench.importers.outputs import ITEMS_NAME, import_outputs
from conformbench.records.replay_file import read_replay
from conformbench.runner.shipped import shipped_replay

CONDITIONS = {"unconstrained": None, "prompt_only[answer]": "answer"}
_ROW_KEYS = ("n", "validity", "accuracy", "wrong_but_valid", "quadrants", "truncated", "looped", "runaway")


def _outputs_of_shipped(tmp_path: Path, condition: str) -> Path:
    contents = read_replay(shipped_replay("gsm8k"))
    path = tmp_path / f"{condition.replace('[', '-').rstrip(']')}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for gen in contents.generations:
            if gen.condition.key == condition:
                fh.write(json.dumps({"item_id": gen.item_id, "text": gen.text,
                                     "finish_reason": gen.finish_reason}) + "\n")
    return path


def _rows(report: Path) -> dict[str, dict[str, Any]]:
    (result,) = json.loads(report.read_text())["results"]
    return {arm["key"]: {k: arm[k] for k in _ROW_KEYS} for arm in result["arms"]}


def _ledger(path: Path, conditions: set[str]) -> list[tuple[str, ...]]:
    with path.open(newline="") as fh:
        return sorted((r["item_id"], r["condition"], r["state"], r["truncated"], r["runaway"])
                      for r in csv.DictReader(fh) if r["condition"] in conditions)


@pytest.mark.long
def test_imported_outputs_score_like_the_run_that_made_them(tmp_path: Path) -> None:
    replays = []
    for condition, contract in CONDITIONS.items():
        summary = import_outputs(_outputs_of_shipped(tmp_path, condition), "gsm8k",
                                 tmp_path / condition, contract=contract, model="smollm2-135m")
        assert summary.items == 200 and summary.condition == condition
        replays.append(summary.replay)
    conformbench.score(replays, out=tmp_path / "imported")
    conformbench.score(shipped_replay("gsm8k"), out=tmp_path / "shipped")
    imported, shipped = _rows(tmp_path / "imported/report.json"), _rows(tmp_path / "shipped/report.json")
    assert set(imported) == set(CONDITIONS)
    for condition in CONDITIONS:
        assert imported[condition] == shipped[condition], condition
    assert imported["prompt_only[answer]"]["truncated"] > 0  # finish reasons came through
    assert (_ledger(tmp_path / "imported/ledger.csv", set(CONDITIONS))
            == _ledger(tmp_path / "shipped/ledger.csv", set(CONDITIONS)))


def test_custom_item_lines_carry_their_items(tmp_path: Path) -> None:
    source = tmp_path / "qa.jsonl"
    source.write_text(
        '{"item": {"question": "2+2?", "answer": "4", "id": "sum"}, "text": "Answer: 4"}\n'
        '{"item": {"question": "Capital of France?", "answer": "Paris"}, "text": "Answer: Lyon",'
        ' "prompt": "Capital of France? Reply with Answer: X"}\n', encoding="utf-8")
    summary = import_outputs(source, "custom", tmp_path / "out", model="m")
    assert summary.prompts_rebuilt == 1
    items = [json.loads(line) for line in (tmp_path / "out" / ITEMS_NAME).read_text().splitlines()]
    assert [i["id"] for i in items] == ["sum", "q2"]
    contents = read_replay(summary.replay)
    assert contents.generations[1].prompt.messages[0].content == "Capital of France? Reply with Answer: X"
    conformbench.score(summary.replay, out=tmp_path / "scored")
    (arm,) = json.loads((tmp_path / "scored/report.json").read_text())["results"][0]["arms"]
    assert arm["key"] == "unconstrained" and (arm["accuracy"]["k"], arm["accuracy"]["n"]) == (1, 2)


def test_the_same_file_imports_to_the_same_bytes(tmp_path: Path) -> None:
    source = tmp_path / "o.jsonl"
    source.write_text('{"item_id": "simple_0", "text": "{\\"a\\": 1}"}\n', encoding="utf-8")
    first = import_outputs(source, "bfcl-simple", tmp_path / "a", contract="arguments")
    second = import_outputs(source, "bfcl-simple", tmp_path / "b", contract="arguments")
    assert first.replay.read_bytes() == second.replay.read_bytes()


@pytest.mark.parametrize(("lines", "task", "contract", "message"), [
    (['{"item_id": "gsm8k_tst_0", "text": "x"}'], "gsm8k", None, "did you mean 'gsm8k_test_0'"),
    (['{"item_id": "gsm8k_test_0", "text": "x"}'] * 2, "gsm8k", None, "appears twice"),
    (['{"item_id": "gsm8k_test_0", "text": "x"}'], "gsm8k", "answr", "did you mean 'answer'"),
    (['{"item_id": "gsm8k_test_0", "text": "x"}'], "gsm8", None, "did you mean 'gsm8k'"),
    (['{"item_id": "gsm8k_test_0", "txt": "x"}'], "gsm8k", None, "not an outputs line"),
    (['{"item_id": "gsm8k_test_0", "text": "x", "finish_reason": "eos"}'], "gsm8k", None, "finish_reason"),
    (['{"item": {"question": "q", "answer": "a"}, "text": "x"}'], "gsm8k", None, "for task custom"),
    (['{"item_id": "a", "text": "x"}', '{"item": {"question": "q", "answer": "a"}, "text": "x"}'],
     "custom", None, "mixes"),
    (['{"text": "x"}'], "gsm8k", None, 'give one of "item_id"'),
    (["{not json"], "gsm8k", None, "not a JSON line"),
    ([], "gsm8k", None, "holds no outputs"),
    (['{"item_id": "x", "text": "x"}'], "generation", None, "not run through the decoding arms"),
])
def test_bad_outputs_are_usage_errors(tmp_path: Path, lines: list[str], task: str, contract: str | None,
                                      message: str) -> None:
    source = tmp_path / "o.jsonl"
    source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(UsageError, match=message.replace("[", r"\[")):
        import_outputs(source, task, tmp_path / "out", contract=contract)


def test_an_existing_replay_is_never_overwritten(tmp_path: Path) -> None:
    source = tmp_path / "o.jsonl"
    source.write_text('{"item_id": "gsm8k_test_0", "text": "18"}\n', encoding="utf-8")
    import_outputs(source, "gsm8k", tmp_path / "out")
    before = (tmp_path / "out/replay.jsonl").read_bytes()
    with pytest.raises(UsageError, match="already exists"):
        import_outputs(source, "gsm8k", tmp_path / "out")
    assert (tmp_path / "out/replay.jsonl").read_bytes() == before
