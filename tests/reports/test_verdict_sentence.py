"""The verdict's headline and one sentence per comparison
(reports/verdict_sentence.py): each of the three calls in its words, a
detected effect too wide to size, the items the asked difference needs for
what was not detected beside the items the run has, the headline's number,
interval and word, and the multi-round arms' comparisons in the verdict
beside the grammar's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import numpy as np

from conformbench.records.markdown_escape import md_text
from conformbench.records.results import Comparison, Delta
from conformbench.reports.markdown import render_markdown
from conformbench.reports.rescore import score_replays
from conformbench.reports.verdict import smoke_lines, terminal_comparisons
from conformbench.reports.verdict_sentence import HEADLINE_WORDS, comparison_sentence, headline
from conformbench.scoring.paired import paired_delta

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
                    "(only 4 item(s) changed, and the exact test cannot reject with fewer than 6); to tell a "
                    f"10-point difference from chance this run would need about {d.n_needed} items for schema "
                    "validity; it has 4.")


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
    assert text.endswith(f"to tell a 10-point difference from chance this run would need about {few[0].n_needed} "
                         f"items for schema validity and about {few[1].n_needed} items for answer accuracy; it has 5.")
    many = paired_delta("accuracy", *_flips(300, 10, 8, 100))
    assert many.n_needed is not None and many.n_needed <= 300 and not many.detected
    assert comparison_sentence(_comp(many, n=300), "answer accuracy").endswith(
        "; its 300 items are enough to tell a 10-point difference from chance.")


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
    lines = terminal_comparisons(result, verbose=True)
    heads = [line[len("  - "):] for line in lines if line.startswith("  - ")]
    said = [line[len("    "):] for line in lines if line.startswith("    ")]
    assert len(heads) == len(said) >= 2
    for asked in ("repair[answer] against prompt_only[answer]", "repair[answer] against constrained[answer]@llguidance"):
        assert any(s.startswith(f"{asked} on 12 items: ") for s in said), asked
        assert any(h.startswith(f"{asked}: schema validity ") for h in heads), asked
    md = render_markdown(run).splitlines()
    # as report.md writes any text: escaped so that no ``[x]:`` or ``](`` can make a link (#59)
    assert all(f"- **{md_text(h)}**" in md for h in heads) and all(f"  - {md_text(s)}" in md for s in said)
    assert smoke_lines(run)[0].startswith("verdict: ")


def test_metrics_that_moved_alike_share_one_clause() -> None:
    """Generation's accuracy is its validity: said once, both named."""
    a, b = _flips(40, 20, base=5)
    same = [paired_delta("validity", a, b), paired_delta("accuracy", a, b)]
    text = comparison_sentence(_comp(*same, n=40), "schema-valid sample (Gen Acc)")
    assert text.count(" points [") == 1
    assert "raised schema validity and schema-valid sample (Gen Acc) by 50.0 points " in text


def test_the_headline_is_a_number_its_interval_and_one_word() -> None:
    """Issue #58: one line a newcomer reads first; each of the three words."""
    four = paired_delta("validity", *_flips(4, 4))  # interval excludes 0, the exact test cannot reject
    assert headline(_comp(four, n=4), "answer accuracy") == (
        f"{HEAD}: schema validity +100.0 points {_iv(four)}, too few items")
    many = paired_delta("validity", *_flips(200, 190, base=5))
    assert headline(_comp(many, n=200), "answer accuracy") == (
        f"{HEAD}: schema validity +95.0 points {_iv(many)}, likely real")
    null = paired_delta("accuracy", *_flips(300, 10, 8, 100))  # enough items, nothing detected
    assert null.n_needed is not None and null.n_needed <= 300
    assert headline(_comp(null, n=300), "answer accuracy") == (
        f"{HEAD}: answer accuracy +0.7 points {_iv(null)}, not established")
    said = {headline(_comp(d, n=n), "x").rsplit(", ", 1)[1] for d, n in ((four, 4), (many, 200), (null, 300))}
    assert said == set(HEADLINE_WORDS)


def test_the_headline_names_the_first_metric_both_conditions_measure() -> None:
    a, b = _flips(40, 20, base=5)
    deltas = [paired_delta("validity", a, b), paired_delta("accuracy", *_flips(40, 1))]
    assert ": answer accuracy +2.5 points " in headline(_comp(*deltas, n=40), "answer accuracy", hidden={"validity"})
    assert headline(_comp(n=40), "answer accuracy").endswith(": no verdict metric both conditions measure")
