"""Regular expressions for number text: syntax, bounds and integer steps.

Every function returns a plain regular expression (Python ``re`` and Rust
``regex`` read it the same way), matched against a whole lexeme. A bounded
number is the intersection of several of them (``syntax & above & below &
step``), which llguidance's Lark terminals state with ``&``; the pieces stay
free of ``&`` so the tests can check each against brute force.

Number text is JSON-like: ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?`` or scientific
with a normalised mantissa (``1.5e+16``, ``1e-05``: what Python's ``repr``
and PyYAML write). Exponents stay within [-307, 307], so a value never
overflows to infinity or underflows to zero when it is read back.
"""

from __future__ import annotations

from decimal import Decimal
from math import gcd
from typing import TYPE_CHECKING

from conformbench.engines.grammars.strings import intersect, rx

if TYPE_CHECKING:
    from conformbench.engines.grammars.shapes import NumberRule

__all__ = [
    "INTEGER",
    "NUMBER",
    "above",
    "below",
    "multiples",
    "number_terminal",
    "stated_step",
]

_MAX_EXP = 307
_FRAC_ANY = r"(?:\.[0-9]+)?"
_DIGITS = "0123456789"

#: canonical integer text (no leading zeros, no "-0")
INTEGER = r"(?:0|-?[1-9][0-9]*)"


def _digit_class(low: int, high: int) -> str:
    if low == high:
        return str(low)
    return f"[{low}-{high}]"


def _alt(parts: list[str]) -> str:
    """An alternation that matches nothing when ``parts`` is empty."""
    return "(?:" + "|".join(parts) + ")" if parts else r"(?:[^\s\S])"


def _same_length_range(low: str, high: str) -> list[str]:
    """Digit strings of one length between ``low`` and ``high`` inclusive."""
    if len(low) == 1:
        return [_digit_class(int(low), int(high))]
    if low[0] == high[0]:
        return [low[0] + _alt(_same_length_range(low[1:], high[1:]))]
    rest = len(low) - 1
    parts = [low[0] + _alt(_same_length_range(low[1:], "9" * rest))]
    if int(high[0]) - int(low[0]) > 1:
        parts.append(_digit_class(int(low[0]) + 1, int(high[0]) - 1) + f"[0-9]{{{rest}}}")
    parts.append(high[0] + _alt(_same_length_range("0" * rest, high[1:])))
    return parts


def uint_range(low: int, high: int | None) -> str:
    """Canonical unsigned integers in [low, high] (``high`` None: no top)."""
    parts: list[str] = []
    top_len = len(str(high)) if high is not None else len(str(low))
    for length in range(len(str(low)), top_len + 1):
        first = 0 if length == 1 else 10 ** (length - 1)
        lo = max(low, first)
        hi = 10**length - 1 if high is None else min(high, 10**length - 1)
        if lo <= hi:
            parts.extend(_same_length_range(str(lo), str(hi)))
    if high is None:
        parts.append(f"[1-9][0-9]{{{top_len},}}")
    return _alt(parts)


def _split(value: Decimal) -> tuple[str, str]:
    """Integer digits and fraction digits (no trailing zeros) of a
    non-negative decimal."""
    text = f"{value:f}"
    whole, _, frac = text.partition(".")
    return whole, frac.rstrip("0")


def _frac_above(frac: str) -> str:
    """Fraction digit strings f (one or more digits) with 0.f > 0.frac."""
    parts = [frac + "[0-9]*[1-9][0-9]*"]
    for i, ch in enumerate(frac):
        if ch != "9":
            parts.append(frac[:i] + _digit_class(int(ch) + 1, 9) + "[0-9]*")
    return _alt(parts)


def _frac_below(frac: str) -> str:
    """Fraction digit strings f with 0.f < 0.frac (``frac`` not empty)."""
    parts = [frac[:i] + "0*" for i in range(1, len(frac))]
    for i, ch in enumerate(frac):
        if ch != "0":
            parts.append(frac[:i] + _digit_class(0, int(ch) - 1) + "[0-9]*")
    return _alt(parts)


def _equal_tail(frac: str) -> str:
    return rf"\.{frac}0*" if frac else r"(?:\.0+)?"


def _exponents(low: int, high: int) -> str:
    """Exponent text (``e+16``, ``E-05``...) for exponents in [low, high]."""
    low, high = max(low, -_MAX_EXP), min(high, _MAX_EXP)
    parts = []
    if high >= 0 and max(low, 0) <= high:
        parts.append(r"\+?0*" + uint_range(max(low, 0), high))
    if low < 0:
        parts.append("-0*" + uint_range(max(1, -min(high, -1)), -low))
    if low <= 0 <= high:
        parts.append("-0+")
    return "[eE]" + _alt(parts)


def _sci_parts(value: Decimal) -> tuple[int, int, str]:
    """(first digit, exponent, further mantissa digits) of a positive decimal."""
    digits = value.normalize().as_tuple()
    mantissa = "".join(str(d) for d in digits.digits)
    exponent = len(mantissa) - 1 + int(digits.exponent)
    return int(mantissa[0]), exponent, mantissa[1:].rstrip("0")


_SCI_ANY = rf"[1-9]{_FRAC_ANY}" + _exponents(-_MAX_EXP, _MAX_EXP)


def _magnitude_above(value: Decimal, inclusive: bool) -> str:
    """Unsigned number text whose value is > (or >=) ``value`` >= 0."""
    whole, frac = _split(value)
    parts = [uint_range(int(whole) + 1, None) + _FRAC_ANY, whole + r"\." + _frac_above(frac)]
    if inclusive:
        parts.append(whole + _equal_tail(frac))
    if value == 0:
        parts.append(_SCI_ANY)
        return _alt(parts)
    first, exp, rest = _sci_parts(value)
    parts.append(rf"[1-9]{_FRAC_ANY}" + _exponents(exp + 1, _MAX_EXP))
    mantissa = [str(first) + r"\." + _frac_above(rest)]
    if first < 9:
        mantissa.append(_digit_class(first + 1, 9) + _FRAC_ANY)
    if inclusive:
        mantissa.append(str(first) + _equal_tail(rest))
    parts.append(_alt(mantissa) + _exponents(exp, exp))
    return _alt(parts)


def _magnitude_below(value: Decimal, inclusive: bool) -> str:
    """Unsigned number text whose value is < (or <=) ``value`` >= 0."""
    whole, frac = _split(value)
    parts = []
    if inclusive:
        parts.append(whole + _equal_tail(frac))
    if value == 0:
        return _alt(parts)
    if int(whole) > 0:
        parts.append(uint_range(0, int(whole) - 1) + _FRAC_ANY)
    if frac:
        parts.append(whole + rf"(?:\.{_frac_below(frac)})?")
    first, exp, rest = _sci_parts(value)
    parts.append(rf"[1-9]{_FRAC_ANY}" + _exponents(-_MAX_EXP, exp - 1))
    mantissa = [str(first) + rf"(?:\.{_frac_below(rest)})?"] if rest else []
    if first > 1:
        mantissa.append(_digit_class(1, first - 1) + _FRAC_ANY)
    if inclusive:
        mantissa.append(str(first) + _equal_tail(rest))
    if mantissa:
        parts.append(_alt(mantissa) + _exponents(exp, exp))
    return _alt(parts)


_MAGNITUDE = rf"(?:(?:0|[1-9][0-9]*){_FRAC_ANY}|{_SCI_ANY})"
_ZERO = r"0(?:\.0+)?"

#: any number text (finite, exponent within +-307)
NUMBER = rf"-?{_MAGNITUDE}"


def above(bound: Decimal, exclusive: bool) -> str:
    """Number text whose value is >= ``bound`` (> when ``exclusive``)."""
    if bound > 0:
        return _magnitude_above(bound, not exclusive)
    if bound == 0:
        return _magnitude_above(bound, False) if exclusive else _alt([_MAGNITUDE, "-" + _ZERO])
    return _alt([_MAGNITUDE, "-" + _magnitude_below(-bound, not exclusive)])


def below(bound: Decimal, exclusive: bool) -> str:
    """Number text whose value is <= ``bound`` (< when ``exclusive``)."""
    if bound > 0:
        return _alt([_magnitude_below(bound, not exclusive), "-" + _MAGNITUDE])
    if bound == 0:
        return "-" + _magnitude_above(bound, False) if exclusive else _alt([_ZERO, "-" + _MAGNITUDE])
    return "-" + _magnitude_above(-bound, not exclusive)


def _scaled(step: Decimal) -> tuple[int, int] | None:
    """(S, d) with ``step == S / 10**d``, for a positive finite step."""
    if not step.is_finite() or step <= 0:
        return None
    _, digits, exponent = step.normalize().as_tuple()
    assert isinstance(exponent, int)
    whole = int("".join(map(str, digits)))
    return (whole * 10**exponent, 0) if exponent >= 0 else (whole, -exponent)


def stated_step(step: Decimal) -> bool:
    """Whether the grammar states ``multipleOf: step``: the multiples are
    recognised by their last digits (the scaled step divides 10**4), and
    the step is exact in binary, so the validator's float division agrees
    with decimal arithmetic (it finds 0.3 / 0.1 = 2.9999999999999996)."""
    scaled = _scaled(step)
    if scaled is None:
        return False
    whole, places = scaled
    if places > 4 or 10**4 % whole != 0:
        return False
    denominator: int = 10**places // gcd(whole, 10**places)
    return denominator & (denominator - 1) == 0


def multiples(step: Decimal) -> str | None:
    """Number text (no exponent) of the multiples of ``step``, or None when
    the grammar does not state them (see ``stated_step``)."""
    scaled = _scaled(step)
    if scaled is None or not stated_step(step):
        return None
    whole, places = scaled
    # the last `width` digits of value * 10**places decide divisibility
    width = next(m for m in range(places, places + 5) if 10**m % whole == 0)
    parts = []
    for n in range(0, 10**width, whole):
        digits = f"{n:0{width}d}"
        tail, frac = digits[: width - places], digits[width - places:].rstrip("0")
        ints = _alt([str(int(tail)), "[1-9][0-9]*" + tail]) if tail else "(?:0|[1-9][0-9]*)"
        parts.append(ints + (rf"\.{frac}0*" if frac else r"(?:\.0+)?"))
    return f"-?{_alt(parts)}"


def number_terminal(rule: NumberRule, integer: bool) -> str:
    """Lark terminal text of number text under ``rule``."""
    base, musts = (INTEGER if integer else NUMBER), []
    stepped = None if rule.step is None else multiples(rule.step)
    if stepped is not None:
        base, musts = stepped, ([INTEGER] if integer else [])
    if rule.lower is not None:
        musts.append(above(rule.lower.value, rule.lower.exclusive))
    if rule.upper is not None:
        musts.append(below(rule.upper.value, rule.upper.exclusive))
    return intersect(rx(base), musts)
