"""--fail-if thresholds are finite numbers (issue #49, defect 14): 1e999
reads as infinity, refused in one line like `inf`."""

from __future__ import annotations

import pytest

from conformbench.errors import UsageError
from conformbench.scoring.gate import parse_gate


@pytest.mark.parametrize("number", ["1e999", "-1e999", "1e400%", "inf", "nan"])
def test_a_threshold_that_is_not_finite_is_refused(number: str) -> None:
    with pytest.raises(UsageError) as exc:
        parse_gate(f"accuracy[*] < {number}")
    assert "\n" not in str(exc.value)


def test_a_finite_threshold_is_taken() -> None:
    assert parse_gate("accuracy[*] < 1e300").threshold == 1e300
