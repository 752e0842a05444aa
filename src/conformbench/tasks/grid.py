"""What a task declares about its run grid and options, and the one
expansion every task's conditions come from: each combination of the
task's axes × each arm × its contracts × the run's engines.

A task declares its axes (``Task.axes``: an ``Axis`` per dimension of its
grid beyond arm, contract and engine, such as the ConCodeEval tasks'
schema format, output format and shot count) and its own options
(``Task.options_model``: a pydantic model, one field per option, checked
there, bounds and choices included). An option of the model becomes a
``conformbench run`` flag in the task's help panel, a keyword of
``conformbench.run`` and a key of the task's ``params`` table in a spec;
an axis's values are chosen by the option it names (a list).
"""

from __future__ import annotations

import itertools
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from conformbench.arms.base import Arm, arms, split_arm_spec
from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue
from conformbench.records.items import AxisValue, Condition
from conformbench.registry import did_you_mean

__all__ = ["Axis", "TaskParams", "arm_conditions", "axis_grid", "checked_params", "option_fields"]


class TaskParams(BaseModel):
    """The base of a task's options model: unknown keys refused, values
    checked strictly (a string option given a number is an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


@dataclass(frozen=True)
class Axis:
    """One dimension of a task's grid: every condition takes one of the
    values the run chooses for it. ``option`` is what chooses them: a field
    of the task's options model (a list; its default is the default
    choice), or else a key of the task's table in the spec (the ConCodeEval
    axes' ``schema_formats``, ``output_formats``, ``shots``, where every
    replay header has held them), which the run's options carry by that key
    in ``RunOptions.axes`` and ``TaskOptions.axes``: the run takes it as
    ``flag`` (repeatable; ``flag_help`` may name registries as the run
    options' help does) and as a keyword named ``option``."""

    name: str
    option: str
    help: str = ""
    #: a spec-key axis's flag (default ``--OPTION``), its help and metavar
    flag: str = ""
    flag_help: str = ""
    metavar: str = "NAME"
    #: the type of one value: a name (str) or a count (int)
    value_type: type[str] | type[int] = str
    #: whether a tools arm (``tools[auto]``...) varies along it; False for an
    #: axis of how the prompt shows what a tools arm sends through the
    #: API's ``tools`` instead (BFCL's ``function_format``): a tools arm's
    #: condition leaves it out, so the arm runs once however many values
    #: the run chooses
    in_tools_arms: bool = True

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.option.replace("_", "-")


def option_fields(model: type[BaseModel] | None) -> dict[str, Any]:
    """The options a task's model declares (name -> pydantic FieldInfo)."""
    return dict(model.model_fields) if model is not None else {}


def checked_params(task: str, model: type[BaseModel] | None, untyped: tuple[str, ...],
                   params: Mapping[str, JSONValue]) -> BaseModel | None:
    """``params`` checked against the task's declarations: every key one of
    its options (the model's fields, or ``untyped``: keys the task checks
    itself), the model's values by pydantic. The model instance (None
    without a model); one clear line on a bad key or value."""
    known = [*option_fields(model), *untyped]
    for key in params:
        if key not in known:
            listed = ", ".join(known) or "none"
            raise UsageError(f"task {task} has no option {key!r}{did_you_mean(key, known)}; known: {listed}")
    if model is None:
        return None
    try:
        return model.model_validate({k: v for k, v in params.items() if k not in untyped})
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        given, hint = error.get("input"), ""
        field = model.model_fields.get(str(error["loc"][0])) if error["loc"] else None
        choices = _choices(field.annotation) if field is not None else ()
        if isinstance(given, str) and choices:
            hint = did_you_mean(given, list(choices)).strip(" ()")
        said = f"got {given!r}" + (f"; {hint}" if hint else "")
        raise UsageError(f"task {task}: option {where}: {error['msg']} ({said})") from None


def _choices(annotation: Any) -> tuple[str, ...]:
    """The choices of a Literal option (or of a list of them)."""
    if typing.get_origin(annotation) in (list, tuple):
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is Literal:
        return tuple(str(c) for c in typing.get_args(annotation))
    return ()


def axis_grid(choices: Mapping[str, tuple[AxisValue, ...]]) -> Iterator[dict[str, AxisValue]]:
    """Every combination of the axes' chosen values, the first axis outermost."""
    names = list(choices)
    for values in itertools.product(*(choices[n] for n in names)):
        yield dict(zip(names, values, strict=True))


def arm_conditions(task: Any, spec: str, axes: Mapping[str, AxisValue]) -> list[Condition]:
    """The conditions of one arm spec ('constrained[answer]', 'prompt_only')
    at one point of the axes: its contracts × the run's engines (an arm
    without a grammar: no engine). ``task`` is a ``Task``."""
    name, contract = split_arm_spec(spec)
    arm = arms.get(name)
    if arm.mode_of is not None:  # the bracket is the arm's mode (tools[required,strict])
        if contract is None:
            raise UsageError(f"arm {name!r} takes its mode in brackets, e.g. {name}[auto] (got {spec!r})")
        if not task.offers_tools:
            raise UsageError(f"task {task.name} offers no functions to call: arm {spec!r} runs on a task that "
                             "does (the bfcl tasks)")
        kept = {a.name for a in task.axes if a.in_tools_arms}
        return [Condition.of(arm.name, None, None, {k: v for k, v in axes.items() if k in kept},
                             mode=arm.mode_of(contract))]
    contracts = _arm_contracts(task, arm, contract, spec)
    engines: tuple[str | None, ...] = task.options.engines if arm.constrained else (None,)
    if not engines:
        raise UsageError(f"arm {spec!r} applies a grammar but no engine is given")
    return [Condition.of(arm.name, c, e, axes) for c in contracts for e in engines]


def _arm_contracts(task: Any, arm: Arm, contract: str | None, spec: str) -> list[str | None]:
    if arm.contracts == "none":
        if contract is not None:
            raise UsageError(f"arm {arm.name!r} takes no contract (got {spec!r})")
        return [None]
    if contract is not None:
        if contract not in task.contracts:
            hint = did_you_mean(contract, list(task.contracts))
            known = ", ".join(task.contracts)
            raise UsageError(f"task {task.name} has no contract {contract!r}{hint}; known: {known}")
        return [contract]
    if arm.contracts == "answer":
        if task.answer_contract is None:
            raise UsageError(f"task {task.name} has no answer contract for {arm.name!r}")
        return [task.answer_contract]
    return list(task.contracts)
