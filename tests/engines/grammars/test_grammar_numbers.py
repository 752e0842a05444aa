"""Number regexes against exact decimal arithmetic, on many number texts."""

from __future__ import annotations

import random
import re
from decimal import Decimal

import pytest

from conformbench.engines.grammars import numbers


def _texts() -> list[str]:
    rng = random.Random(7)
    out = {"0", "-0", "0.0", "1", "-1", "1e-05", "1.0e+16", "1.4726770781501522e+16", "306.19571362586817"}
    for _ in range(1500):
        if rng.random() < 0.6:
            text = str(rng.choice([rng.randint(0, 20), rng.randint(0, 3000)]))
            if rng.random() < 0.5:
                text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 4)))
        else:
            text = rng.choice("123456789")
            if rng.random() < 0.5:
                text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 3)))
            text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 20)).zfill(rng.choice([1, 2]))
        out.add("-" + text if rng.random() < 0.4 else text)
    return sorted(out)


TEXTS = _texts()
BOUNDS = ["0", "1", "-1", "0.5", "-0.5", "306.19571362586817", "100", "-100", "0.05", "12.25", "-36", "1E+2", "0.001"]


def test_every_text_is_number_syntax():
    assert all(re.fullmatch(numbers.NUMBER, t) for t in TEXTS)
    for bad in ("01", "1.", ".5", "1e", "--1", "1e400", "+1", "inf"):
        assert not re.fullmatch(numbers.NUMBER, bad), bad


@pytest.mark.parametrize("bound", BOUNDS)
@pytest.mark.parametrize("exclusive", [False, True])
def test_bounds_agree_with_decimal_comparison(bound, exclusive):
    value = Decimal(bound)
    above = re.compile(numbers.above(value, exclusive))
    below = re.compile(numbers.below(value, exclusive))
    for text in TEXTS:
        x = Decimal(text)
        assert bool(above.fullmatch(text)) == (x > value if exclusive else x >= value), text
        assert bool(below.fullmatch(text)) == (x < value if exclusive else x <= value), text


@pytest.mark.parametrize(("low", "high"), [(0, 0), (0, 9), (5, 123), (1, None), (99, 1000), (17, None)])
def test_uint_range(low, high):
    rx = re.compile(numbers.uint_range(low, high))
    for n in range(3000):
        assert bool(rx.fullmatch(str(n))) == (n >= low and (high is None or n <= high)), n
    assert not rx.fullmatch("01")


@pytest.mark.parametrize("step", ["1", "2", "5", "10", "25", "4", "0.5", "0.25", "2.5", "0.125"])
def test_multiples_agree_with_decimal_and_float_division(step):
    rx = re.compile(numbers.multiples(Decimal(step)) or "")
    rng = random.Random(step)
    for _ in range(5000):
        whole = rng.randint(-3000, 3000)
        frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 3)))
        text = f"{whole}.{frac}" if frac else str(whole)
        multiple = Decimal(text) % Decimal(step) == 0
        assert bool(rx.fullmatch(text)) == multiple, text
        if multiple:  # the validator divides floats: it must agree
            quotient = float(text) / float(step)
            assert int(quotient) == quotient, text


@pytest.mark.parametrize("step", ["3", "7", "0.1", "1.5", "13.08", "0"])
def test_steps_not_stated(step):
    assert not numbers.stated_step(Decimal(step))
    assert numbers.multiples(Decimal(step)) is None
