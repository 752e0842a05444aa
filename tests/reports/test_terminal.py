"""The terminal summary in a log (stderr not a terminal, 80 columns): whole
lines, each condition's rates first, one warning line per kind with a count,
each comparison once, no metric that is 0 by definition, and ``--verbose`` for the full
detail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PREFIXES = ("verdict: ", "formats: ", "reports: ", "demo: rescoring ", "  warning: ", "  ")


def _demo(tmp_path: Path, *extra: str) -> list[str]:
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    done = subprocess.run(
        [sys.executable, "-m", "conformbench.cli.main", "demo", "concodeeval-generation", "bfcl-simple",
         "--out", str(tmp_path), *extra],
        capture_output=True, text=True, timeout=300, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr.splitlines()


@pytest.mark.long
def test_the_log_summary_is_short_whole_and_grouped(tmp_path: Path) -> None:
    lines = _demo(tmp_path)
    headings = [line for line in lines if " on smollm2-135m: N=" in line]
    assert len(headings) == 2
    for line in lines:  # a wrapped line would start mid-sentence
        assert line in headings or line.startswith(PREFIXES), line
    # a label is never split across lines
    assert any("the grammar (json->json/0shot/prompt_only[schema] → json->json/0shot/constrained[schema]@llguidance) "
               "on 99 items: " in line for line in lines)
    budget = [line for line in lines if "rerun with a larger budget" in line]
    assert len(budget) == 2  # one per task, not one per condition
    assert "  warning: 21 conditions cut too many answers at the token budget (" in "\n".join(budget)
    # up to the next replay's heading (demo reports each replay apart)
    generation = lines[lines.index(headings[0]):lines.index(headings[1])]
    assert not any("wrong-but-valid" in line for line in generation)  # 0 by construction there
    # a row per condition (30), then at most 3 comparisons and a line saying how many more
    assert sum(line.startswith("  json->") or line.startswith(("  yaml->", "  xml->", "  python->", "  nl->"))
               for line in generation) == 30
    assert sum(line.startswith("  - the grammar (") for line in generation) == 3
    assert "  ... and 12 more comparisons in report.md (--verbose: all)" in generation
    assert len(lines) < 60 + 30


@pytest.mark.long
def test_verbose_prints_every_warning(tmp_path: Path) -> None:
    lines = _demo(tmp_path, "--verbose")
    budget = [line for line in lines if "rerun with a larger budget" in line]
    assert len(budget) == 21 + 4
    assert any("generation" in h for h in lines) and any("wrong-but-valid" in line for line in lines)


@pytest.mark.long
def test_validation_says_why_n_is_twice_its_schemas() -> None:
    """Issue #44: `-n 3` on validation ran N=6 without saying why."""
    from conformbench.reports.publish import headline_lines
    from conformbench.reports.rescore import score_replays
    from conformbench.runner.shipped import shipped_replay

    run = score_replays([shipped_replay("concodeeval-validation")])
    (result,) = run.results
    assert result.n % 2 == 0 and result.task_info["items_note"].startswith("2 per schema")
    heading = next(line for line in headline_lines(run) if line.startswith("validation on "))
    assert f"N={result.n} items (2 per schema: its valid sample and an invalid one, so N = 2 x -n)" in heading


def test_a_measured_zero_is_shown_a_zero_by_definition_is_not() -> None:
    """A wrong-but-valid rate of 0 that was measured (0.0% [0.0, 49.0] at
    N = 4) is information; generation's is 0 because a sample is right
    exactly when it is valid, and only that one is left out."""
    from conformbench.records.results import Rate
    from conformbench.reports.rescore import score_replays
    from conformbench.reports.terminal import rate_table_lines, unmeasured_metrics
    from conformbench.runner.shipped import shipped_replay
    from conformbench.scoring.intervals import wilson

    (bfcl,) = score_replays([shipped_replay("bfcl-simple")]).results
    zero = Rate(k=0, n=4, rate=0.0, ci95=wilson(0, 4))
    measured_zero = bfcl.model_copy(update={"arms": [a.model_copy(update={"wrong_but_valid": zero})
                                                     for a in bfcl.arms]})
    assert "wrong_but_valid" not in unmeasured_metrics(measured_zero)
    assert "0.0% [0.0, 49.0]" in "\n".join(rate_table_lines(measured_zero, unmeasured_metrics(measured_zero)))
    generation = next(r for r in score_replays([shipped_replay("concodeeval-beam-greedy")]).results
                      if r.task == "generation")
    assert "wrong_but_valid" in unmeasured_metrics(generation)
