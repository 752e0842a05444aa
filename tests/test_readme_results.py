"""The result tables in docs/results.md, and the README's two headline
tables, are the shipped replays rescored now: a number that drifts from what
the replays say fails this test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from results_cells import rate, share

from conformbench.cli.main import main
from conformbench.runner.shipped import shipped_replays

README = Path(__file__).resolve().parents[1] / "README.md"
RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results.md"
#: the README's headline table per job (the rest is in docs/results.md)
HEADLINES = {"bfcl-simple": None, "concodeeval-generation": "**Gen Acc % [95% Wilson], 0-shot, prompt_only[schema]**"}


def _cut(arm: dict[str, Any]) -> str:
    """'8 (4.0%; 7 runaway)': cut answers, and how many of them ran away."""
    text = share(arm["truncated"], arm["n"])
    return f"{text[:-1]}; {arm['runaway']} runaway)" if arm["runaway"] else text


def arm_table(report: dict[str, Any]) -> str:
    """The README's markdown table of one arms task, from its report.json."""
    (result,) = report["results"]
    label = result["correctness_label"]
    # each header says its interval method (the deltas below the tables are paired bootstrap)
    lines = [f"| arm | N | schema validity [95% Wilson] | {label} [95% Wilson] | wrong-but-valid [95% Wilson] "
             "| cut at the budget | ended by the loop stop |",
             "|---|---|---|---|---|---|---|"]
    for arm in result["arms"]:
        n = arm["n"]
        lines.append(f"| `{arm['key']}` | {n} | {rate(arm['validity'])} | "
                     f"{rate(arm['accuracy'])} | {rate(arm['wrong_but_valid'])} | "
                     f"{_cut(arm)} | {share(arm['looped'], n)} |")
    return "\n".join(lines)


@pytest.mark.parametrize("name", ["gsm8k", "bfcl-simple"])
def test_arms_tables_match_the_shipped_replay(tmp_path: Path, name: str) -> None:
    assert name in shipped_replays()
    assert main(["demo", name, "--out", str(tmp_path), "--quiet"]) == 0
    report = json.loads((tmp_path / name / "report.json").read_text(encoding="utf-8"))
    assert arm_table(report) in RESULTS.read_text(encoding="utf-8")
    if name in HEADLINES:
        assert arm_table(report) in README.read_text(encoding="utf-8")


def table_after(markdown: str, title: str) -> str:
    """The markdown table that follows the line starting with ``title``."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    table = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    return "\n".join(table)


CONCODEEVAL_TABLES = {
    "concodeeval-generation": [
        "**Gen Acc % [95% Wilson], 0-shot, prompt_only[schema]**",
        "**IS % / RTV % (lower is better), 0-shot, prompt_only[schema]**",
        "**N / cut at the token budget / ended by the loop stop, 0-shot, prompt_only[schema]**",
        "**Gen Acc % [95% Wilson], 0-shot, constrained[schema]@llguidance**",
        "**N / cut at the token budget / ended by the loop stop, 0-shot, constrained[schema]@llguidance**",
    ],
    "concodeeval-validation": [
        "**Val Acc % [95% Wilson], 0-shot, unconstrained**",
        "**N / cut at the token budget / ended by the loop stop, 0-shot, unconstrained**",
        "**Answers: yes / no / unparseable, 0-shot, unconstrained**",
    ],
    "concodeeval-validation-arms": [
        "**Val Acc % [95% Wilson], 0-shot, prompt_only[answer]**",
        "**N / cut at the token budget / ended by the loop stop, 0-shot, prompt_only[answer]**",
        "**Val Acc % [95% Wilson], 0-shot, constrained[answer]@llguidance**",
        "**N / cut at the token budget / ended by the loop stop, 0-shot, constrained[answer]@llguidance**",
        "**Answers: yes / no / unparseable, 0-shot, constrained[answer]@llguidance**",
    ],
    "concodeeval-models": [
        "**0-shot** (best output format per row in bold",
        "**N / cut at the token budget / ended by the loop stop, 0-shot** (per model",
    ],
    "concodeeval-fewshot": [
        "**Gen Acc % [95% Wilson], 3-shot, prompt_only[schema]**",
        "**Val Acc % [95% Wilson], 2-shot, unconstrained**",
    ],
}


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(CONCODEEVAL_TABLES))
def test_concodeeval_tables_match_the_shipped_replay(tmp_path: Path, name: str) -> None:
    assert name in shipped_replays()
    assert main(["demo", name, "--out", str(tmp_path), "--quiet"]) == 0
    report = (tmp_path / name / "report.md").read_text(encoding="utf-8")
    results = RESULTS.read_text(encoding="utf-8")
    for title in CONCODEEVAL_TABLES[name]:
        assert table_after(report, title) in results, title
    if (headline := HEADLINES.get(name)) is not None:
        assert table_after(report, headline) in README.read_text(encoding="utf-8")


@pytest.mark.long
def test_the_beam_tables_match_the_shipped_replays(tmp_path: Path) -> None:
    """docs/results.md's greedy-against-beam and attention rows are
    ``score concodeeval-beam --against concodeeval-beam-greedy`` (both arms
    made in one session on one build), rescored now."""
    replays = shipped_replays()
    argv = ["score", str(replays["concodeeval-beam"]), "--against", str(replays["concodeeval-beam-greedy"]),
            "--out", str(tmp_path), "--quiet"]
    assert main(argv) == 0
    report = (tmp_path / "report.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(report) if line.startswith("## Decoding against decoding"))
    against = [line for line in report[start:] if line.startswith("| generation |")
               or line.startswith("| validation |")]
    attention = [line for i, line in enumerate(report) if line.startswith("| ") and "/0shot/" in line
                 and any(report[j].startswith("| condition | N | begin |") for j in range(max(0, i - 6), i))]
    assert len(against) == 4 and len(attention) == 4
    results = RESULTS.read_text(encoding="utf-8")
    for row in against + attention:
        assert row in results, row


RUNS = Path(__file__).resolve().parents[1] / "docs" / "evidence"
#: the multi-round arms' results in docs/results.md: task -> its run under docs/evidence/
ROUNDS_RUNS = {"gsm8k": "arms-gsm8k-rounds", "bfcl-simple": "arms-bfcl-rounds"}


def _per(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _num(x: float | None, digits: int) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def cost_table(report: dict[str, Any]) -> str:
    """docs/results.md's cost table of one multi-round run, from its report.json."""
    (result,) = report["results"]
    (cost,) = [s["data"] for s in result["sections"] if s["name"] == "cost"]
    lines = ["| arm | N | calls/item [95% CI] | rounds/item | prompt tokens/item | generated tokens/item "
             "| seconds/item | calls per valid | calls per right |", "|---|---|---|---|---|---|---|---|---|"]
    for a in cost["arms"]:
        lo, hi = a["calls_ci95"]
        lines.append(f"| `{a['key']}` | {a['n']} | {a['calls']:.2f} [{lo:.2f}, {hi:.2f}] | {a['rounds']:.2f} | "
                     f"{_num(a['prompt_tokens'], 0)} | {_num(a['completion_tokens'], 0)} | {_num(a['seconds'], 1)} | "
                     f"{_per(a['calls_per_valid'])} | {_per(a['calls_per_right'])} |")
    return "\n".join(lines)


def rounds_table(report: dict[str, Any]) -> str:
    """docs/results.md's validity-by-round table of the multi-round arms."""
    (result,) = report["results"]
    (cost,) = [s["data"] for s in result["sections"] if s["name"] == "cost"]
    lines = ["| arm | after round | answered in it | schema validity [95% Wilson] | accuracy [95% Wilson] "
             "| wrong-but-valid [95% Wilson] |", "|---|---|---|---|---|---|"]
    for a in cost["arms"]:
        for r in a["by_round"] if len(a["by_round"]) > 1 else []:
            lines.append(f"| `{a['key']}` | {r['round'] + 1} | {r['answered']} | {rate(r['validity'])} | "
                         f"{rate(r['accuracy'])} | {rate(r['wrong_but_valid'])} |")
    return "\n".join(lines)


@pytest.mark.parametrize("task", sorted(ROUNDS_RUNS))
def test_the_multi_round_tables_match_their_replays(tmp_path: Path, task: str) -> None:
    replay = RUNS / ROUNDS_RUNS[task] / "replay.jsonl"
    assert main(["score", str(replay), "--out", str(tmp_path), "--quiet"]) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    text = RESULTS.read_text(encoding="utf-8")
    assert arm_table(report) in text
    assert cost_table(report) in text
    assert rounds_table(report) in text


def generation_repair_table(report: dict[str, Any]) -> str:
    """docs/results.md's table of repair in the ConCodeEval generation cells:
    per schema format, Gen Acc and unparsed share after the first and the last
    round, calls and seconds per item of both arms."""
    (result,) = report["results"]
    (cost,) = [s["data"] for s in result["sections"] if s["name"] == "cost"]
    arms = {a["key"]: a for a in cost["arms"]}
    lines = ["| cell | N | Gen Acc, prompt_only [95% Wilson] | Gen Acc, repair after 3 rounds [95% Wilson] "
             "| unparsed (IS), round 1 → 3 | calls/item (prompt_only / repair) | seconds/item (prompt_only / repair) |",
             "|---|---|---|---|---|---|---|"]
    for key, repair in arms.items():
        if "/repair[" not in key:
            continue
        first, last = repair["by_round"][0], repair["by_round"][-1]
        alone = arms[key.replace("/repair[", "/prompt_only[")]
        lines.append(f"| {key.split('/')[0]} | {repair['n']} | {rate(first['accuracy'])} | {rate(last['accuracy'])} "
                     f"| {rate(first['unparsed'])} → {rate(last['unparsed'])} | {alone['calls']:.2f} / "
                     f"{repair['calls']:.2f} | {alone['seconds']:.1f} / {repair['seconds']:.1f} |")
    return "\n".join(lines)


@pytest.mark.long
def test_the_generation_repair_table_matches_its_replay(tmp_path: Path) -> None:
    replay = RUNS / "concodeeval-generation-repair" / "replay.jsonl"
    assert main(["score", str(replay), "--out", str(tmp_path), "--quiet"]) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert generation_repair_table(report) in RESULTS.read_text(encoding="utf-8")


#: think_then_constrain against reason_then_constrain and constrained (issue #53): task -> its run
THINK_RUNS = {"gsm8k": "arms-think-gsm8k", "bfcl-simple": "arms-think-bfcl"}


def report_table(markdown: str, heading: str) -> str:
    """The first table under ``heading`` in a report.md, as written."""
    lines: list[str] = []
    for line in markdown.split(heading, 1)[1].splitlines():
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break
    return "\n".join(lines)


@pytest.mark.long
@pytest.mark.parametrize("task", sorted(THINK_RUNS))
def test_the_think_tables_match_their_replays(tmp_path: Path, task: str) -> None:
    replay = RUNS / THINK_RUNS[task] / "replay.jsonl"
    assert main(["score", str(replay), "--out", str(tmp_path), "--quiet"]) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    text = RESULTS.read_text(encoding="utf-8")
    (result,) = report["results"]
    assert result["n"] == 200 and all(a["n"] == 200 for a in result["arms"])
    assert arm_table(report) in text
    assert cost_table(report) in text
    for heading in ("### The mask's toll", "### Thinking, then the schema, in one call"):
        table = report_table(markdown, heading)
        assert table.count("\n") >= 2 and table in text, heading
