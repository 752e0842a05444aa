"""The size knob for running documented commands as tests.

``CONFORMBENCH_TEST_SIZE=N`` caps every count a command takes at N: the
items of each task of a run (``-n``, a spec's ``n``, a dataset's every
line), an engine probe's samples per keyword, an engine check's generated
schemas, a cost measurement's requests, repeats and concurrency levels. It
changes nothing else (the tasks, arms, engines, models, servers and outputs
stay the command's), so a README line can be run exactly as written and
finish in seconds (tests/test_readme_commands.py). Unset, empty or 0: no cap.
Users never need it; a report made under it says so in its spec (its n)."""

from __future__ import annotations

import os

from conformbench.errors import UsageError

__all__ = ["TEST_SIZE_ENV", "capped", "capped_levels", "test_size"]

#: the environment variable
TEST_SIZE_ENV = "CONFORMBENCH_TEST_SIZE"


def test_size() -> int | None:
    """The cap from the environment, or None (unset, empty or 0)."""
    text = os.environ.get(TEST_SIZE_ENV, "").strip()
    if not text:
        return None
    try:
        size = int(text)
    except ValueError:
        raise UsageError(f"{TEST_SIZE_ENV}={text!r}: expected a whole number of items (0: no cap)") from None
    if size < 0:
        raise UsageError(f"{TEST_SIZE_ENV}={text!r}: expected a whole number of items (0: no cap)")
    return size or None


def capped(count: int) -> int:
    """``count``, at most the knob's cap."""
    size = test_size()
    return count if size is None else min(count, size)


def capped_levels(levels: tuple[int, ...]) -> tuple[int, ...]:
    """Concurrency levels, each at most the cap (levels that become equal are one)."""
    return tuple(dict.fromkeys(capped(level) for level in levels))
