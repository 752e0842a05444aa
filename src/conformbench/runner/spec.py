"""The run spec: models x tasks x arms x engines x formats x shots, decoding
settings and run options, from a TOML file or CLI flags, validated strictly
(unknown keys and unknown names are rejected with a did-you-mean)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from conformbench.errors import UnknownNameError, UsageError
from conformbench.files import read_bytes_file
from conformbench.jsontypes import number_error
from conformbench.records.generation import url_credentials_refusal
from conformbench.records.plain_data import settings_data_refusal
from conformbench.records.spec import SERVER_ENGINE, ArmRecipe, RunSpec, TaskSpec
from conformbench.registry import did_you_mean

__all__ = ["check_names", "check_settings_data", "load_spec_file", "parse_spec", "resolve_engines"]

#: the most bytes of a TOML spec file (a real one is a few KB)
MAX_SPEC_BYTES = 8 << 20

def _unique(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise UsageError(f"{what} {name!r} appears twice in the run spec")
        seen.add(name)


def _field_names(loc: tuple[int | str, ...]) -> list[str]:
    """Field names of the spec model at ``loc`` (for key did-you-means)."""
    model: type[BaseModel] = RunSpec
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return []
        ann = field.annotation
        inner = getattr(ann, "__args__", (ann,))
        found = [t for t in inner if isinstance(t, type) and issubclass(t, BaseModel)]
        if not found:
            return []
        model = found[0]
    return list(model.model_fields)


def _loc_text(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "spec"


def _explain(exc: ValidationError, source: str) -> UsageError:
    lines = []
    for err in exc.errors()[:5]:
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            key = str(loc[-1])
            hint = did_you_mean(key, _field_names(loc[:-1]))
            where = _loc_text(loc[:-1])
            lines.append(f"unknown key {key!r} in {where}{hint}")
        elif err["type"] == "range":  # a declared Range: its message gives the whole range
            lines.append(f"{_loc_text(loc)} {err['msg']}")
        else:
            lines.append(f"{_loc_text(loc)}: {err['msg']}")
    more = len(exc.errors()) - len(lines)
    tail = f" (and {more} more)" if more > 0 else ""
    return UsageError(f"{source}: " + "; ".join(lines) + tail)


def parse_spec(data: dict[str, Any], source: str = "run spec") -> RunSpec:
    """Validate a spec given as plain data (keys and names)."""
    check_settings_data(data, source)
    try:
        spec = RunSpec.model_validate(data)
    except ValidationError as exc:
        raise _explain(exc, source) from None
    _unique([m.label for m in spec.models], "model label")
    _no_url_credentials(spec)
    _unique([t.name for t in spec.tasks], "task")
    check_names(spec)
    from conformbench.runner.instruments import check_instruments

    return check_instruments(resolve_engines(_record_arms(_record_rounds(spec))))


def _no_url_credentials(spec: RunSpec) -> None:
    """A base URL's user name or password would land in the replay header
    and every report: refused before anything is written."""
    for model in spec.models:
        for url in model.base_urls:
            refusal = url_credentials_refusal(url)
            if refusal:
                raise UsageError(f"model {model.label!r}: {refusal}")


def load_spec_file(path: Path) -> dict[str, Any]:
    """Read a TOML spec file as plain data (validate it with parse_spec)."""
    raw = read_bytes_file(path, "spec file", MAX_SPEC_BYTES)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:  # its message ends with (at line L, column C)
        raise UsageError(f"{path} is not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise UsageError(f"{path} is nested too deeply to read as TOML") from None
    except ValueError as exc:  # an integer past Python's int-string limit
        raise UsageError(f"{path}: {number_error(exc)}") from None
    check_settings_data(data, str(path))
    return data


def check_settings_data(data: object, source: str) -> None:
    """One UsageError when ``data`` nests too deep, contains itself or holds
    an integer past ±2**63 (``records.plain_data``), before anything
    recurses into it."""
    refusal = settings_data_refusal(data)
    if refusal is not None:
        raise UsageError(f"{source}: {refusal}")


def _engine_names() -> list[str]:
    from conformbench.engines.base import engines

    return [*engines.names(), SERVER_ENGINE]


def _arm_name(arm: str, where: str = "arms") -> str:
    """The arm name of an arm spec (``constrained[answer]`` -> ``constrained``),
    read by the one arm-spec grammar (``arms.split_arm_spec``)."""
    from conformbench.arms.base import split_arm_spec

    try:
        return split_arm_spec(arm)[0]
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _check(where: str, lookup: Any, name: str) -> None:
    try:
        lookup(name)
    except UnknownNameError as exc:
        raise UnknownNameError(f"{where}: {exc}") from None


def _check_engine(where: str, name: str) -> None:
    known = _engine_names()
    if name not in known:
        hint = did_you_mean(name, known)
        raise UnknownNameError(
            f"{where}: unknown engine {name!r}{hint}; known: {', '.join(known)}"
        )


def check_names(spec: RunSpec) -> None:
    """Every backend, task, arm, engine and format name must be registered."""
    from conformbench.arms.base import arms
    from conformbench.backends.base import backends
    from conformbench.formats.base import output_formats, schema_formats
    from conformbench.tasks.base import tasks

    for i, model in enumerate(spec.models):
        _check(f"models[{i}].backend", backends.get, model.backend)
    for i, task in enumerate(spec.tasks):
        where = f"tasks[{i}]"
        _check(f"{where}.name", tasks.get, task.name)
        for arm in task.arms:
            # an arm spec may name its contract: 'constrained[answer]' (the task checks S)
            _check(f"{where}.arms", arms.get, _arm_name(arm, f"{where}.arms"))
        for engine in task.engines:
            _check_engine(f"{where}.engines", engine)
        for fmt in task.schema_formats:
            _check(f"{where}.schema_formats", schema_formats.get, fmt)
        for fmt in task.output_formats:
            _check(f"{where}.output_formats", output_formats.get, fmt)
        if any(s < 0 for s in task.shots):
            raise UsageError(f"{where}.shots: shot counts must be >= 0")


def _record_rounds(spec: RunSpec) -> RunSpec:
    """A run with a multi-round arm records its round limit in the header
    (the default when none is given); other runs record none (null)."""
    from conformbench.arms.base import arms

    if spec.decoding.max_rounds is not None:
        return spec
    if not any(arms.get(_arm_name(a)).rounds for t in spec.tasks for a in t.arms):
        return spec
    decoding = spec.decoding.model_copy(update={"max_rounds": spec.decoding.rounds})
    return spec.model_copy(update={"decoding": decoding})


def _record_arms(spec: RunSpec) -> RunSpec:
    """The recipe of each arm the run names that conformbench does not ship
    (a user's ``repair(feedback=...)``: its factory and arguments), so the
    replay says what the arm was and a resume under another recipe is
    refused; a run of shipped arms keeps the header it had."""
    from conformbench.arms.base import arms

    recipes: dict[str, ArmRecipe] = {}
    for name in sorted({_arm_name(a) for t in spec.tasks for a in t.arms} - set(arms.builtins)):
        recipe = arms.get(name).recipe
        if recipe is None:
            continue
        recipes[name] = ArmRecipe.model_validate(recipe.as_json())
        given = spec.arms.get(name)
        if given is not None and given != recipes[name]:
            raise UsageError(f"arms.{name}: the spec records the arm as {given.policy} with "
                             f"{given.arguments}, but the arm registered now is {recipes[name].policy} with "
                             f"{recipes[name].arguments}: import the module that defines it as recorded")
    return spec.model_copy(update={"arms": recipes})


def _constrained(task: TaskSpec) -> bool:
    """Whether the task may run a constrained arm (no arms: the task's
    defaults, which include one)."""
    from conformbench.arms.base import arms

    return not task.arms or any(arms.get(_arm_name(a)).constrained for a in task.arms)


def resolve_engines(spec: RunSpec) -> RunSpec:
    """Fill each task's empty engine list with the engine its models'
    backend constrains with (``server`` for HTTP backends, llguidance in
    process), and refuse an engine a model's backend cannot apply with a
    one-line error that names the right one."""
    from conformbench.backends.base import default_engine, engine_mismatch

    defaults = {m.backend: default_engine(m.backend) for m in spec.models}
    chosen = sorted(set(defaults.values()))
    tasks = []
    for i, task in enumerate(spec.tasks):
        if not task.engines:
            if len(chosen) > 1 and _constrained(task):
                mix = ", ".join(f"{b}: {e}" for b, e in sorted(defaults.items()))
                raise UsageError(f"tasks[{i}] ({task.name}): the models' backends constrain with "
                                 f"different engines ({mix}); run them separately")
            task = task.model_copy(update={"engines": chosen[:1]})
        for model in spec.models if _constrained(task) else ():
            for engine in task.engines:
                why = engine_mismatch(model.backend, engine)
                if why:
                    raise UsageError(f"tasks[{i}].engines: {why} (model {model.label!r})")
        tasks.append(task)
    return spec.model_copy(update={"tasks": tasks})
