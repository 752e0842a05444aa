"""docs/results.md's BFCL v4 tables (issue #60, item 7) are the evidence
replays under docs/evidence/ rescored now: prompt mode with and without the
grammar at the task's 384 tokens (the first 200 items of each large
category), the same on the first 40 at 4x that budget (its rates equal the
384-token run's on those items, checked here), and the tools modes through
llama-server on the same items, with what forcing a call buys and costs
(``tools[auto]`` against ``tools[required]`` and ``tools[named]``, paired).
A number that drifts from what a replay says fails this test.

``python tests/test_results_bfcl_v4.py`` prints the tables (what the doc's
section was written from)."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from results_cells import delta, rate, share

from conformbench.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results.md"
EVIDENCE = ROOT / "docs" / "evidence"
#: the run at the task's own budget (384 tokens), whose first items the budget check grew
SEEDED = "bfcl-v4-calls"
#: the budget check: the seeded run's first 280 items at 1536 tokens
BUDGET_CHECK = "bfcl-v4-calls-budgetcheck"
#: the tools modes through llama-server
TOOLS = "bfcl-v4-tools"
#: the section's runs whose tables it shows, in their order
RUNS = (SEEDED, BUDGET_CHECK, TOOLS)
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


def _by_category(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A report's results by BFCL category (one task each)."""
    return {r["task_info"]["bfcl_category"]: r for r in report["results"]}


def calls_table(report: dict[str, Any]) -> str:
    """One row per category and arm: the call decision (called where a
    function fits, not where none does), right function and arguments valid
    (over the answers that called), AST accuracy, wrong-but-valid, and the
    cut and loop-stopped shares."""
    lines = ["| category | arm | N | call decision [95% Wilson] | right function | arguments valid (of calls) "
             "| AST accuracy | wrong-but-valid | cut at the budget | ended by the loop stop |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    by_category = _by_category(report)
    for category in ORDER:
        if category in by_category:
            lines.extend(_rows(by_category[category]))
    return "\n".join(lines)


def _p_value(p: float) -> str:
    return f"{p:.2g}" if p >= 0.001 else "< 0.001"


def grammar_table(report: dict[str, Any]) -> str:
    """Per category, what the grammar changes on the same items
    (prompt_only[calls] -> constrained[calls]): AST accuracy and
    wrong-but-valid, each a paired difference with its 95% interval, and
    the exact McNemar p of the first."""
    lines = ["| category | N | AST accuracy, prompt → grammar | difference [95% paired] | McNemar p "
             "| wrong-but-valid difference [95% paired] |", "|---|---|---|---|---|---|"]
    by_category = _by_category(report)
    for category in (c for c in ORDER if c in by_category):
        (grammar,) = [c for c in by_category[category]["comparisons"] if c["role"] == "headline"]
        found = {d["metric"]: d for d in grammar["deltas"]}
        accuracy, wrong = found["accuracy"], found["wrong_but_valid"]
        lines.append(f"| {category} | {grammar['n']} | {100 * accuracy['from_rate']:.1f}% → "
                     f"{100 * accuracy['to_rate']:.1f}% | {delta(accuracy)} | {_p_value(accuracy['mcnemar_p'])} "
                     f"| {delta(wrong)} |")
    return "\n".join(lines)


def forcing_table(report: dict[str, Any]) -> str:
    """Per category and forced arm, paired with ``tools[auto]`` (same
    ``strict``) on the same items: the call decision auto -> forced, and
    AST accuracy where a function fits (what forcing buys) or the call
    decision where none does (what it costs), each a paired difference with
    its 95% interval and exact McNemar p."""
    lines = ["| category | auto → forced | N | call decision, auto → forced | difference [95% paired] | McNemar p "
             "| AST accuracy difference [95% paired] |", "|---|---|---|---|---|---|---|"]
    by_category = _by_category(report)
    for category in (c for c in ORDER if c in by_category):
        forcing = [s["data"] for s in by_category[category]["sections"] if s["name"] == "tools_forcing"]
        for line in (x for data in forcing for x in data["lines"] if x["n"]):  # none where only auto ran
            found = {d["metric"]: d for d in line["deltas"]}
            decision = found["call_decision"]
            accuracy = delta(found["accuracy"]) if "accuracy" in found else "n/a (no function fits)"
            lines.append(f"| {category} | `{_arm_name(line['auto'])}` → `{_arm_name(line['forced'])}` | {line['n']} "
                         f"| {100 * decision['from_rate']:.1f}% → {100 * decision['to_rate']:.1f}% | {delta(decision)} "
                         f"| {_p_value(decision['mcnemar_p'])} | {accuracy} |")
    return "\n".join(lines)


def scored(run: str, out: Path, items: set[str] | None = None) -> dict[str, Any]:
    """RUN's replay scored; with ``items``, only those items' records of it."""
    replay = EVIDENCE / run / "replay.jsonl"
    if items is not None:
        out.mkdir(parents=True, exist_ok=True)
        replay = _restricted(replay, items, out / "replay.jsonl")
    assert main(["score", str(replay), "--out", str(out), "--quiet"]) == 0
    return dict(json.loads((out / "report.json").read_text(encoding="utf-8")))


def _item_ids(run: str) -> set[str]:
    lines = (EVIDENCE / run / "replay.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["item"]["id"] for r in map(json.loads, lines) if r["kind"] == "item"}


def _restricted(replay: Path, items: set[str], to: Path) -> Path:
    """A copy of ``replay`` with the item and generation records of ``items`` only."""
    kept = []
    for line in replay.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        item = record["item"]["id"] if record["kind"] == "item" else record.get("item_id")
        if item is None or item in items:
            kept.append(line)
    to.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return to


Reports = Callable[[str], dict[str, Any]]


@pytest.fixture(scope="module")
def report_of(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    """RUN's whole replay scored once for the module (the 384-token replay
    is 13 MB; two tests read each run's report)."""
    reports: dict[str, dict[str, Any]] = {}

    def report(run: str) -> dict[str, Any]:
        if run not in reports:
            reports[run] = scored(run, tmp_path_factory.mktemp(run))
        return reports[run]

    return report


@pytest.mark.parametrize("run", RUNS)
def test_the_bfcl_v4_tables_match_their_replays(report_of: Reports, run: str) -> None:
    if not (EVIDENCE / run / "replay.jsonl").is_file():
        pytest.fail(f"docs/evidence/{run}/replay.jsonl is missing: docs/results.md's BFCL v4 section reads it")
    table = calls_table(report_of(run))
    assert table.count("\n") >= 3, table
    assert table in RESULTS.read_text(encoding="utf-8"), f"docs/results.md lacks this table of {run}:\n{table}"


def test_the_grammar_differences_match_the_replay(report_of: Reports) -> None:
    table = grammar_table(report_of(SEEDED))
    assert table.count("\n") == len(ORDER) + 1, table
    assert table in RESULTS.read_text(encoding="utf-8"), f"docs/results.md lacks this table:\n{table}"


def test_the_forcing_table_matches_the_replay(report_of: Reports) -> None:
    table = forcing_table(report_of(TOOLS))
    assert table.count("\n") >= 3, table
    assert table in RESULTS.read_text(encoding="utf-8"), f"docs/results.md lacks this table:\n{table}"


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


def test_four_times_the_budget_changes_no_rate(tmp_path: Path, report_of: Reports) -> None:
    """The doc's claim: on the items the budget check grew, every rate of
    every row at 1536 tokens equals the 384-token run's; only the cut and
    loop-stopped shares move, and the doc gives the 384-token cut counts."""
    grown_items = _item_ids(BUDGET_CHECK)
    assert len(grown_items) == 280 and grown_items < _item_ids(SEEDED)
    seeded = scored(SEEDED, tmp_path, grown_items)
    grown = report_of(BUDGET_CHECK)
    assert _without_budget_columns(calls_table(seeded)) == _without_budget_columns(calls_table(grown))
    text = RESULTS.read_text(encoding="utf-8")
    for arm, (cut, n) in _cut_totals(seeded).items():
        assert f"{cut} of the {n} `{arm}` answers" in text, (arm, cut, n)


if __name__ == "__main__":
    for name in sys.argv[1:] or RUNS:
        with tempfile.TemporaryDirectory() as tmp:
            report = scored(name, Path(tmp))
            print(f"## {name}\n\n{calls_table(report)}\n")
            if name == SEEDED:
                print(f"{grammar_table(report)}\n")
            if name == TOOLS:
                print(f"{forcing_table(report)}\n")
