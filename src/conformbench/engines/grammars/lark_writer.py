"""Writing a Lark grammar for llguidance: rules built once per key,
terminals shared by body, dead rules (empty languages) dropped.

Compilers ask for a rule by a hashable key (a shape, an indentation, a
context) and a function that returns its alternatives. The name is reserved
before the alternatives are built, so recursive rules work. A rule whose
alternatives all turned out dead is dead itself: ``rule`` returns None and
the caller leaves out every alternative that needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

__all__ = ["EMPTY", "LarkBuilder", "seq"]

#: the empty alternative
EMPTY = '""'


def seq(*parts: str | None) -> str | None:
    """Parts in sequence; None (dead) if any part is dead."""
    if any(p is None for p in parts):
        return None
    kept = [p for p in parts if p and p != EMPTY]
    return " ".join(kept) if kept else EMPTY


class LarkBuilder:
    """Rules and terminals of one grammar, in the order they were first asked for."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._rules: dict[Hashable, str | None] = {}
        self._bodies: dict[str, str] = {}
        self._terminals: dict[str, str] = {}
        self._count = 0

    def _name(self, kind: str) -> str:
        self._count += 1
        return f"{kind}{self._count}"

    def terminal(self, body: str) -> str:
        """The name of a terminal (lexeme) with this Lark body."""
        if body not in self._terminals:
            self._terminals[body] = self._name(self._prefix.upper() + "_T")
        return self._terminals[body]

    def rule(self, key: Hashable, alternatives: Callable[[], Sequence[str | None]]) -> str | None:
        """The rule for ``key``, its alternatives built on first request;
        None when none of them can match anything."""
        if key in self._rules:
            return self._rules[key]
        name = self._name(self._prefix.lower() + "_")
        self._rules[key] = name
        alive = list(dict.fromkeys(a for a in alternatives() if a is not None))
        if not alive:
            self._rules[key] = None
            return None
        self._bodies[name] = "\n    | ".join(alive)
        return name

    def reserved(self, key: Hashable) -> str:
        """The name of a rule under construction (for recursive rules)."""
        name = self._rules.get(key)
        if name is None:
            raise KeyError(f"no rule is being built for {key!r}")
        return name

    def text(self, start: str, header: Sequence[str] = ()) -> str:
        """The grammar, ``start`` being the top rule."""
        lines = [*header, f"start: {start}"]
        lines += [f"{name}: {body}" for name, body in self._bodies.items()]
        lines += [f"{name}: {body}" for body, name in self._terminals.items()]
        return "\n".join(lines) + "\n"
