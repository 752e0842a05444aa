"""A backend class stopped before it loads anything: its ``__init__`` keeps
the config it got and raises a UsageError, so ``conformbench run`` exits 2
after writing the replay header (tests of options that reach a backend)."""

from __future__ import annotations

import pytest

from conformbench.errors import UsageError
from conformbench.records.generation import BackendConfig

#: the smallest live run: one item, one arm, no canary
RUN_ONE = ["run", "--task", "gsm8k", "-n", "1", "--arm", "unconstrained", "--no-canary", "--quiet"]


def refuse_to_load(monkeypatch: pytest.MonkeyPatch, backend_class: type) -> list[BackendConfig]:
    """The configs ``backend_class`` is made with, from now on (it never loads)."""
    seen: list[BackendConfig] = []

    def refuse(self: object, config: BackendConfig) -> None:
        seen.append(config)
        raise UsageError("stub: no model loaded")

    monkeypatch.setattr(backend_class, "__init__", refuse)
    return seen
