"""docs/results.md's BFCL v4 tables (issue #60, item 7) are the evidence
replays under docs/evidence/ rescored now: prompt mode with and without the
grammar at 4x the task's 384 tokens (its rates equal the 384-token run's,
checked here), and the tools modes through llama-server. A number that
drifts from what a replay says fails this test.

``python tests/test_results_bfcl_v4.py`` prints the tables (what the doc's
section was written from)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from results_cells import rate, share

from conformbench.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results.md"
EVIDENCE = ROOT / "docs" / "evidence"
#: the section's runs whose tables it shows, in their order
RUNS = ("bfcl-v4-calls-budgetcheck", "bfcl-v4-tools")
#: the run at the task's own budget (384 tokens), which the budget check grew
SEEDED = "bfcl-v4-calls"
#: the categories in the order the tables list them
ORDER = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance", "live_simple",
         "live_parallel", "live_parallel_multiple")


def _arm_name(condition: str) -> str:
    return condition.split("/", 1)[1] if condition.startswith("function_format=") else condition


def _rows(result: dict[str, Any]) -> list[str]:
    (calls,) = [s["data"] for s in result["sections"] if s["name"] == "bfcl_calls"]
    arms = {a["key"]: a for a in result["arms"]}
    rows = []
    for a in calls["arms"]:
        arm = arms[a["condition"]]
        n = arm["n"]
        rows.append(f"| {calls['category']} | `{_arm_name(a['condition'])}` | {n} | {rate(a['decision'])} | "
                    f"{rate(a['right_function'])} | {rate(a['arguments_valid'])} | {rate(a['accuracy'])} | "
                    f"{rate(a['wrong_but_valid'])} | {share(arm['truncated'], n)} | {share(arm['looped'], n)} |")
    return rows


def calls_table(report: dict[str, Any]) -> str:
    """One row per category and arm: the call decision (called where a
    function fits, not where none does), right function and arguments valid
    (over the answers that called), AST accuracy, wrong-but-valid, and the
    cut and loop-stopped shares."""
    lines = ["| category | arm | N | call decision [95% Wilson] | right function | arguments valid (of calls) "
             "| AST accuracy | wrong-but-valid | cut at the budget | ended by the loop stop |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    by_category = {r["task_info"]["bfcl_category"]: r for r in report["results"]}
    for category in ORDER:
        if category in by_category:
            lines.extend(_rows(by_category[category]))
    return "\n".join(lines)


def scored(run: str, out: Path) -> dict[str, Any]:
    replay = EVIDENCE / run / "replay.jsonl"
    assert main(["score", str(replay), "--out", str(out), "--quiet"]) == 0
    return dict(json.loads((out / "report.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("run", RUNS)
def test_the_bfcl_v4_tables_match_their_replays(tmp_path: Path, run: str) -> None:
    if not (EVIDENCE / run / "replay.jsonl").is_file():
        pytest.fail(f"docs/evidence/{run}/replay.jsonl is missing: docs/results.md's BFCL v4 section reads it")
    table = calls_table(scored(run, tmp_path))
    assert table.count("\n") >= 3, table
    assert table in RESULTS.read_text(encoding="utf-8"), f"docs/results.md lacks this table of {run}:\n{table}"


def _without_budget_columns(table: str) -> list[str]:
    return ["|".join(row.split("|")[:-3]) for row in table.splitlines()[2:]]


def _cut_totals(report: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Per arm: answers cut at the budget, and answers in all."""
    totals: dict[str, tuple[int, int]] = {}
    for result in report["results"]:
        for arm in result["arms"]:
            cut, n = totals.get(_arm_name(arm["key"]), (0, 0))
            totals[_arm_name(arm["key"])] = (cut + arm["truncated"], n + arm["n"])
    return totals


def test_four_times_the_budget_changes_no_rate(tmp_path: Path) -> None:
    """The doc's claim: at 1536 tokens every rate of every row equals the
    384-token run's; only the cut and loop-stopped shares move, and the doc
    gives the 384-token cut counts."""
    seeded = scored(SEEDED, tmp_path / "seeded")
    grown = scored(RUNS[0], tmp_path / "grown")
    assert _without_budget_columns(calls_table(seeded)) == _without_budget_columns(calls_table(grown))
    text = RESULTS.read_text(encoding="utf-8")
    for arm, (cut, n) in _cut_totals(seeded).items():
        assert f"{cut} of the {n} `{arm}` answers" in text, (arm, cut, n)


if __name__ == "__main__":
    for name in sys.argv[1:] or (SEEDED, *RUNS):
        with tempfile.TemporaryDirectory() as tmp:
            print(f"## {name}\n\n{calls_table(scored(name, Path(tmp)))}\n")
