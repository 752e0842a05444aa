"""No `--fail-if` gate hangs (issue #59, case 5): a glob is matched without
backtracking (``glob_match``, at most len(glob) x len(label) steps; the
``fnmatch``-style regex took 38 s at 13 ``?*`` pairs, 68 s at 14) and the
threshold is read by hand within a length bound (a 20,000-digit number took
a regex 30 s). Each gate here is parsed and evaluated in under a second, or
refused in one line, by ``run``/``score``'s gates and ``engines cost``'s."""

from __future__ import annotations

import fnmatch
import re
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformbench import api
from conformbench.errors import UsageError
from conformbench.files import shipped_data
from conformbench.scoring.gate import MAX_GATE_CHARS, glob_match, parse_gate
from conformbench.serving.fail_if import parse_cost_gate

#: a label the hostile globs nearly match: the worst case for a backtracking regex
LABEL = "a" * 60 + "b"


def _under_a_second(start: float) -> None:
    assert time.perf_counter() - start < 1.0, time.perf_counter() - start


@pytest.mark.parametrize("pairs", [13, 14, 20, 120])
def test_a_glob_of_many_wildcard_pairs_matches_in_linear_time(pairs: int) -> None:
    start = time.perf_counter()
    gate = parse_gate(f"accuracy[{'?*' * pairs}c] > 0.5")
    assert not gate.matches((LABEL, LABEL * 3))
    assert gate.matches((LABEL * 5 + "c",))
    _under_a_second(start)
    start = time.perf_counter()
    cost = parse_cost_gate(f"tpot_ratio[{'*?' * pairs}x] > 1.2")
    assert not cost.matches((LABEL,))
    _under_a_second(start)


@pytest.mark.parametrize("threshold", [
    "1" * 20_000 + "x",  # the case: the regex split the digits every way before failing (30 s)
    "1" * 20_000, "0." + "0" * 20_000 + "1", "1e" + "9" * 20_000, "9" * 39 + "x"])
def test_a_huge_threshold_is_one_line_at_once(threshold: str) -> None:
    for parse in (parse_gate, parse_cost_gate):
        start = time.perf_counter()
        with pytest.raises(UsageError) as exc:
            parse(f"accuracy[*] > {threshold}")
        _under_a_second(start)
        assert "\n" not in str(exc.value) and len(str(exc.value)) < 400, str(exc.value)[:400]


def test_a_long_threshold_within_the_gate_bound_is_refused_not_parsed_slowly() -> None:
    with pytest.raises(UsageError, match="characters long"):
        parse_gate("accuracy > " + "1" * 60)
    assert parse_gate("accuracy > 0.000000000000000000000000000000000001").threshold == 1e-36


def test_a_gate_past_the_length_bound_is_refused_whole() -> None:
    """Variants the issue does not name: deep brackets and a long metric."""
    for text in ("accuracy" + "[" * 10_000 + "]" * 10_000 + " > 0", "a" * 100_000 + " > 0"):
        start = time.perf_counter()
        with pytest.raises(UsageError, match=f"at most {MAX_GATE_CHARS} characters"):
            parse_gate(text)
        _under_a_second(start)


def _fnmatch_star_question(glob: str, text: str) -> bool:
    """The old reading: '*' and '?' wildcards, every other character literal."""
    pattern = re.escape(glob).replace(r"\*", ".*").replace(r"\?", ".")
    return re.fullmatch(pattern, text, re.DOTALL) is not None


@given(st.text("ab*?[]", max_size=8), st.text("ab[]", max_size=10))
def test_glob_match_reads_globs_as_the_old_regex_did(glob: str, text: str) -> None:
    assert glob_match(glob, text) == _fnmatch_star_question(glob, text)
    if "[" not in glob and "]" not in glob:  # fnmatch's own classes aside, the same answer
        assert glob_match(glob, text) == fnmatch.fnmatchcase(text, glob)


def test_score_evaluates_a_hostile_glob_gate_in_under_a_second(tmp_path: Path) -> None:
    """End to end: `score --fail-if` with 20 `?*` pairs on a shipped replay."""
    replay = tmp_path / "r.jsonl"
    replay.write_bytes(shipped_data("replays/gsm8k.jsonl").read_bytes())
    gate = f"accuracy[{'?*' * 20}zz] > 0.5"
    with pytest.raises(UsageError, match="matches no condition"):
        start = time.perf_counter()
        api.score(replay, out=tmp_path / "out", fail_if=[gate])
    assert time.perf_counter() - start < 60  # scoring itself; the gate's own part is timed above
