"""The options a backend takes in its model's ``extra`` table, declared once
on the backend class (``options: ClassVar[tuple[BackendOption, ...]]``).

``conformbench run``'s flags (a help panel per backend), the API's keywords
(``conformbench.run(batched=4)``) and the checks of a spec file's ``extra``
tables are all built from these declarations: a backend's new option, or a
new backend's options, need no edit in the runner or the CLI. An option
given for a model whose backend does not declare it is refused, naming the
backends that do."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformbench.backends.base import backends
from conformbench.errors import UsageError
from conformbench.registry import did_you_mean

__all__ = ["BackendOption", "check_backend_options", "declared_options", "options_of"]

_TYPE_WORDS = {int: "a whole number", float: "a number", str: "a text", bool: "true or false"}


@dataclass(frozen=True)
class BackendOption:
    """One option of a backend: its key in the model's ``extra`` table
    (``name``, also the API keyword; the CLI flag is ``--name`` with
    hyphens unless ``flag`` says otherwise), its value type and range, and
    its help text. ``check(value, where)`` is the backend's own check of a
    value (a UsageError naming ``where``), run after the type, range and
    choices."""

    name: str
    type: type[Any]
    help: str
    metavar: str = "VALUE"
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    check: Callable[[Any, str], object] | None = None
    flag: str = ""

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def keyword(self) -> str:
        """The API's keyword and the CLI's parameter: the flag's name (``dialect`` for ``--dialect``)."""
        return self.cli_flag.removeprefix("--").replace("-", "_")

    def validate(self, value: Any, where: str) -> Any:
        """``value`` as the option takes it, or a one-line UsageError that
        names ``where`` (a flag, or a spec key)."""
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, self.type) or (self.type is not bool and isinstance(value, bool)):
            raise UsageError(f"{where} must be {_TYPE_WORDS.get(self.type, self.type.__name__)}, not {value!r}")
        low, high = self.minimum, self.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            if low is not None and high is not None:  # the whole range, so one retry is enough
                raise UsageError(f"{where} must be between {low:g} and {high:g}, not {value!r}")
            bound = f"at least {low:g}" if low is not None else f"at most {high:g}"
            raise UsageError(f"{where} must be {bound}, not {value!r}")
        if self.choices and value not in self.choices:
            raise UsageError(f"{where}: unknown value {value!r}{did_you_mean(str(value), list(self.choices))}; "
                             f"known: {', '.join(self.choices)}")
        if self.check is not None:
            self.check(value, where)
        return value


def options_of(backend: str) -> tuple[BackendOption, ...]:
    """The options ``backend`` declares (none for a backend that declares none)."""
    return tuple(getattr(backends.get(backend), "options", ()))


def declared_options() -> dict[str, list[tuple[str, BackendOption]]]:
    """Every declared option by its keyword, with the backends declaring it
    (a keyword two backends share is one flag; each checks its own values)."""
    found: dict[str, list[tuple[str, BackendOption]]] = {}
    for backend in backends.names():
        for option in options_of(backend):
            found.setdefault(option.keyword, []).append((backend, option))
    return found


def check_backend_options(backend: str, given: dict[str, Any], named: Callable[[BackendOption], str],
                          by: str = "keyword") -> dict[str, Any]:
    """``given`` (option keyword, or ``by="name"`` its ``extra`` key -> value)
    checked against ``backend``'s declarations, returned by ``extra`` key; an
    option it does not declare is refused, naming the backends that do.
    ``named`` says what an option is called where it was given (its flag on
    the command line, ``extra.NAME`` in a spec)."""
    own = {getattr(option, by): option for option in options_of(backend)}
    foreign = [key for key in given if key not in own]
    if foreign:
        declared = declared_options()
        owners = sorted({b for key in foreign for b, _ in declared.get(key, [])})
        names = ", ".join(named(declared[key][0][1]) if key in declared else key for key in foreign)
        verb = "applies" if len(foreign) == 1 else "apply"
        if not owners:
            raise UsageError(f"{names}: no backend takes this option")
        where = " or ".join(f"the {b} backend (--backend {b})" for b in owners)
        raise UsageError(f"{names} {verb} to {where}, not {backend!r}")
    return {own[key].name: own[key].validate(value, named(own[key])) for key, value in given.items()}
