"""The verdict's one sentence per comparison (reports/verdict_sentence.py):
each of the three calls in its words, a detected effect too wide to size,
the items the asked difference needs for what was not detected, and the
multi-round arms' comparisons in the verdict beside the grammar's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import numpy as np

from conformbench.records.results import Comparison, Delta
from conformbench.reports.markdown import render_markdown
from conformbench.reports.verdict import smoke_lines, terminal_comparisons
from conformbench.reports.verdict_sentence import comparison_sentence
from conformbench.scoring.paired import paired_delta
from conformbench.scoring.score import score_replays

ROOT = Path(__file__).resolve().parents[2]
HEAD = "the grammar (prompt_only[answer] → constrained[answer]@llguidance)"


def _flips(n: int, up: int, down: int = 0, base: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n paired items: ``up`` go no -> yes, ``down`` yes -> no, ``base`` yes -> yes."""
    a = np.zeros(n, dtype=bool)
    b = np.zeros(n, dtype=bool)
    b[:up] = True
    a[up:up + down] = True
    a[up + down:up + down + base] = b[up + down:up + down + base] = True
    return a, b


def _iv(d: Delta) -> str:
    return f"[{100 * d.ci95[0]:+.1f}, {100 * d.ci95[1]:+.1f}]"


def _comp(*deltas: Delta, n: int, role: Literal["headline", "policy"] = "headline", frm: str = "prompt_only[answer]",
          to: str = "constrained[answer]@llguidance") -> Comparison:
    return Comparison(from_key=frm, to_key=to, role=role, n=n, deltas=list(deltas), transitions={}, flips=None)


def test_four_items_moving_one_way_are_not_established_and_say_why() -> None:
    d = paired_delta("validity", *_flips(4, 4))
    text = comparison_sentence(_comp(d, n=4), "answer accuracy")
    assert text == (f"{HEAD} on 4 items: raised schema validity by 100.0 points {_iv(d)}, not established "
                    "(only 4 item(s) changed, and the exact test cannot reject with fewer than 6); detecting 10 "
                    f"points needs {d.n_needed} items for schema validity.")


def test_a_detected_effect_wider_than_the_asked_difference_is_too_wide_to_size() -> None:
    d = paired_delta("validity", *_flips(8, 8))
    assert d.detected
    assert comparison_sentence(_comp(d, n=8), "answer accuracy").endswith(
        f"raised schema validity by 100.0 points {_iv(d)}, detected but too few items to size it.")
    narrow = paired_delta("validity", *_flips(200, 190, base=5))
    text = comparison_sentence(_comp(narrow, n=200), "answer accuracy")
    assert narrow.detected and narrow.ci95[1] - narrow.ci95[0] < 0.2
    assert text.endswith(f"raised schema validity by 95.0 points {_iv(narrow)}, detected.")


def test_nothing_detected_says_the_items_each_metric_needs_or_that_n_is_enough() -> None:
    few = [paired_delta("validity", *_flips(5, 1, 1, 2)), paired_delta("accuracy", *_flips(5, 2, 2))]
    assert few[0].n_needed != few[1].n_needed  # each metric its own discordance
    text = comparison_sentence(_comp(*few, n=5), "answer accuracy")
    assert "no detectable change in schema validity (+0.0 [" in text and " or answer accuracy (+0.0 [" in text
    assert text.endswith(f"detecting 10 points needs {few[0].n_needed} items for schema validity and "
                         f"{few[1].n_needed} items for answer accuracy.")
    many = paired_delta("accuracy", *_flips(300, 10, 8, 100))
    assert many.n_needed is not None and many.n_needed <= 300 and not many.detected
    assert comparison_sentence(_comp(many, n=300), "answer accuracy").endswith(
        "; 300 items are enough to detect 10 points.")


def test_a_multi_round_arm_is_named_against_its_one_answer_arm() -> None:
    d = paired_delta("validity", *_flips(8, 0, 8))
    text = comparison_sentence(_comp(d, n=8, role="policy", frm="constrained[answer]@llguidance",
                                     to="repair[answer]"), "answer accuracy")
    assert text.startswith("repair[answer] against constrained[answer]@llguidance on 8 items: lowered schema "
                           f"validity by 100.0 points {_iv(d)}, detected but too few items to size it")


def _cut(src: Path, dst: Path, k: int) -> Path:
    """The replay with its first k items and only their generations."""
    keep: set[str] = set()
    out = []
    for line in src.read_text(encoding="utf-8").splitlines(keepends=True):
        rec = json.loads(line)
        if rec["kind"] == "item":
            if len(keep) >= k:
                continue
            keep.add(rec["item"]["id"])
        if rec["kind"] == "generation" and rec["item_id"] not in keep:
            continue
        out.append(line)
    dst.write_text("".join(out), encoding="utf-8")
    return dst


def test_the_verdict_covers_repair_against_both_one_answer_arms(tmp_path: Path) -> None:
    """The repair comparisons a user asks for are in the verdict: terminal
    and report.md, the same sentences."""
    replay = _cut(ROOT / "docs/evidence/arms-gsm8k-rounds/replay.jsonl", tmp_path / "replay.jsonl", 12)
    run = score_replays([replay])
    (result,) = run.results
    said = [line[len("  - "):] for line in terminal_comparisons(result, verbose=True) if line.startswith("  - ")]
    for asked in ("repair[answer] against prompt_only[answer] on 12 items: ",
                  "repair[answer] against constrained[answer]@llguidance on 12 items: "):
        assert any(s.startswith(asked) for s in said), asked
    md = render_markdown(run).splitlines()
    assert all(f"- {s}" in md for s in said)
    assert smoke_lines(run)[0].startswith("verdict: ")


def test_metrics_that_moved_alike_share_one_clause() -> None:
    """Generation's accuracy is its validity: said once, both named."""
    a, b = _flips(40, 20, base=5)
    same = [paired_delta("validity", a, b), paired_delta("accuracy", a, b)]
    text = comparison_sentence(_comp(*same, n=40), "schema-valid sample (Gen Acc)")
    assert text.count(" points [") == 1
    assert "raised schema validity and schema-valid sample (Gen Acc) by 50.0 points " in text
