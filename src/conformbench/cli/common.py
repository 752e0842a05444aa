"""Helpers shared by command modules.

Flag convention: a flag that takes names is singular and repeatable, and a
value may also be a comma-separated list (``--engine gbnf --engine
llguidance`` = ``--engine gbnf,llguidance``); help texts list the names a
registry holds now, so a plugin shows up in ``--help`` without an edit here.
"""

from __future__ import annotations

import inspect
import json
import math
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperArgument

from conformbench.errors import UsageError
from conformbench.files import MAX_SCHEMA_BYTES, read_text_file
from conformbench.registry import Registry, check_choice, join_names

__all__ = ["WithBackendOptions", "backend_option_parameters", "check_choice", "join_names", "names_of", "print_json",
           "read_json_file", "read_text_file", "run_flag", "split_values"]


#: a comma outside brackets: ``tools[required,strict],prompt_only`` is two arms
_LIST_COMMA = re.compile(r",(?![^\[\]]*\])")


def _usage_name(self: Any) -> str:
    """An argument in a usage line as click, argparse and man pages write it:
    ``SCHEMA_FILE``, ``[REPLAY]``, ``INSTANCE...``. typer 0.29 wraps a
    required one in braces (``{SCHEMA_FILE}``), which reads as a choice or
    a placeholder to fill in."""
    name = str(self.display_name_raw)
    name = name if self.required else f"[{name}]"
    return name + ("..." if self.nargs != 1 else "")


if hasattr(TyperArgument, "_usage_display_name"):  # typer's usage line of an argument (0.29)
    TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign]


def split_values(values: Iterable[str]) -> tuple[str, ...]:
    """Repeated options and comma-separated lists alike, in order, without
    blanks; a comma inside brackets (an arm's mode) does not split."""
    return tuple(part.strip() for value in values for part in _LIST_COMMA.split(value) if part.strip())


def names_of(registry: Registry[Any], extra: Iterable[str] = ()) -> str:
    """'a, b or c': the registry's names (plus ``extra``) for a help text."""
    try:
        names = [*registry.names(), *extra]
    except ImportError:  # a broken plugin: help still prints, the command says why
        return f"see conformbench list ({registry.kind})"
    return join_names(names)


def run_flag(name: str, **names: str) -> Any:
    """The typer option of ``RunOptions`` field ``name`` as ``run`` shows
    it (flag, metavar, help; ``names`` fill the help's ``{backends}``...),
    for another command taking the same option (``engines probe``'s
    ``--model``): declared once, in ``runner.run_options``. Its bounds are
    the declaration's too: the value is checked where it is used
    (``BackendConfig``'s ranges)."""
    from conformbench.runner.run_options import flags

    found = next((flag for f, flag in flags() if f.name == name), None)
    if found is None:
        raise KeyError(f"RunOptions has no flag {name!r}")
    return typer.Option(found.flag, *([found.short] if found.short else []), metavar=found.metavar,
                        help=found.help.format(**names), show_default=False)


def backend_option_parameters() -> list[inspect.Parameter]:
    """A keyword parameter per option the backends declare now
    (``--batched``, ``--dialect``...), in its backends' help panel; the
    range is checked by the declaration itself, whose message gives the
    whole range."""
    from conformbench.backends.backend_options import declared_options

    params = []
    for name, owners in declared_options().items():
        decl = owners[0][1]
        panel = " / ".join(f"{backend} backend" for backend, _ in owners)
        option = typer.Option(decl.cli_flag, metavar=decl.metavar, help=decl.help, rich_help_panel=panel)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation=Annotated[decl.type | None, option]))
    return params


class WithBackendOptions:
    """``command`` as typer sees it, with a flag per option the backends
    declare (``backend_option_parameters``, read each time typer reads the
    signature, so a plugin's show up); ``command`` is called with its own
    parameters and ``backend_options``, the ones given (keyword -> value)."""

    def __init__(self, command: Callable[..., None]) -> None:
        self._command = command
        self.__name__ = self.__qualname__ = command.__name__
        self.__doc__ = command.__doc__

    @property
    def __signature__(self) -> inspect.Signature:
        sig = inspect.signature(self._command, eval_str=True)
        own = [p for p in sig.parameters.values() if p.name != "backend_options"]
        return sig.replace(parameters=own + backend_option_parameters())

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}

    def __call__(self, **values: Any) -> None:
        own = inspect.signature(self._command).parameters
        given = {k: v for k, v in values.items() if k not in own and v is not None}
        self._command(**{k: v for k, v in values.items() if k in own}, backend_options=given)


def read_json_file(path: Path) -> Any:
    """Parse a JSON schema file, or raise UsageError with one clear line
    (one over ``MAX_SCHEMA_BYTES`` is refused unread)."""
    from conformbench.schemas.external import SchemaTooDeepError, loads_schema  # not for a usage error

    text = read_text_file(path, "schema", MAX_SCHEMA_BYTES)
    try:
        return loads_schema(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except SchemaTooDeepError as exc:
        raise UsageError(f"{path} is {exc}") from None
    except RecursionError:
        raise UsageError(f"{path} is nested too deeply to read as JSON") from None


def _standard(value: Any) -> Any:
    """``value`` with every NaN or infinity as null: standard JSON, which
    ``json.dumps`` does not write by default (``NaN``, ``Infinity``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _standard(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_standard(v) for v in value]
    return value


def print_json(value: Any) -> None:
    """``value`` as standard JSON on stdout (a NaN is printed as null)."""
    sys.stdout.write(json.dumps(_standard(value), indent=2, ensure_ascii=False, allow_nan=False) + "\n")
