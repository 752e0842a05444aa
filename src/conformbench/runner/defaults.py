"""The default run (``conformbench run`` with no arguments) and how CLI flags
build or override a spec.

The default run is live on the embedded model and touches both experiments
and the decoding arms; it is sized to finish in about five minutes on a
2-core machine. Tune it with ``DEFAULT_SIZES`` alone.

Measured with 3/3/4/4 items (generation/validation/gsm8k/bfcl): 100
generations, 12.6k prompt and 5.0k completion tokens; the sizes below are
about 1.7x that (~160 generations, ~9k completion tokens: ~1.5-2.5 min at
SmolLM2's ~110 tok/s when the machine is otherwise idle).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformbench.backends.backend_options import check_backend_options, options_of
from conformbench.backends.locate import default_label
from conformbench.records.spec import RunSpec
from conformbench.runner.run_options import RunOptions, flags
from conformbench.runner.spec import check_settings_data, load_spec_file, parse_spec
from conformbench.runner.test_size import test_size
from conformbench.tasks.custom_schema import read_schema_file

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SIZES",
    "DefaultSizes",
    "RunOptions",
    "build_spec",
    "default_spec",
    "default_spec_data",
]

#: the embedded SmolLM2-135M-Instruct (the llamacpp backend finds it when
#: ``model`` is unset)
DEFAULT_MODEL: dict[str, Any] = {"label": "smollm2-135m", "backend": "llamacpp"}


@dataclass(frozen=True)
class DefaultSizes:
    """Sizes of the default run; every knob that moves its wall time."""

    gsm8k_n: int = 4
    bfcl_n: int = 4
    generation_n: int = 3
    #: schemas; the validation task makes a valid and an invalid item of each
    validation_n: int = 2
    #: ConCodeEval cells: schema formats x output formats
    schema_formats: tuple[str, ...] = ("json", "yaml", "nl")
    output_formats: tuple[str, ...] = ("json",)
    gsm8k_arms: tuple[str, ...] = field(default=(
        "unconstrained", "prompt_only[answer]", "constrained[answer]",
        "reason_then_constrain[answer]"))
    bfcl_arms: tuple[str, ...] = field(default=(
        "unconstrained", "prompt_only[arguments]", "constrained[arguments]"))
    generation_arms: tuple[str, ...] = ("prompt_only", "constrained")
    validation_arms: tuple[str, ...] = ("unconstrained", "prompt_only", "constrained")


DEFAULT_SIZES = DefaultSizes()


def _arm_task(name: str, n: int, arms: tuple[str, ...]) -> dict[str, Any]:
    # no engines: they follow the backend (llguidance in process, "server" over HTTP)
    return {"name": name, "n": n, "arms": list(arms)}


def default_spec_data(sizes: DefaultSizes = DEFAULT_SIZES) -> dict[str, Any]:
    cells = {"schema_formats": list(sizes.schema_formats),
             "output_formats": list(sizes.output_formats)}
    return {
        "models": [dict(DEFAULT_MODEL)],
        # no budgets here: every task spends its own (the paper's 1024 for
        # ConCodeEval, validbutwrong's 384 per turn for the arms), with the loop stop
        "decoding": {"temperature": 0.0, "seed": 0},
        "tasks": [
            {"name": "generation", "n": sizes.generation_n, **cells,
             "arms": list(sizes.generation_arms)},
            {"name": "validation", "n": sizes.validation_n, **cells,
             "arms": list(sizes.validation_arms)},
            _arm_task("gsm8k", sizes.gsm8k_n, sizes.gsm8k_arms),
            _arm_task("bfcl-simple", sizes.bfcl_n, sizes.bfcl_arms),
        ],
    }


def default_spec(sizes: DefaultSizes = DEFAULT_SIZES) -> RunSpec:
    return parse_spec(default_spec_data(sizes), "default run")


def _set(target: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != ():
        if isinstance(value, Path):
            value = str(value)
        target[key] = list(value) if isinstance(value, tuple) else value


def _apply(table: str, target: dict[str, Any], o: RunOptions) -> None:
    """Set in ``target`` every option that goes to ``table`` and is set."""
    for f, flag in flags():
        if flag.table == table:
            _set(target, flag.key or f.name, getattr(o, f.name))


def _tasks(base: list[dict[str, Any]], o: RunOptions) -> list[dict[str, Any]]:
    by_name = {t.get("name"): t for t in base}
    chosen = [dict(by_name.get(n, {"name": n})) for n in o.tasks] if o.tasks else base
    for task in chosen:
        if o.max_tokens is not None:  # one budget for every turn replaces the task's own
            for key in ("max_tokens", "free_tokens", "json_tokens", "packaging_tokens", "think_tokens"):
                task.pop(key, None)
        _apply("task", task, o)
        for key, values in o.axes:  # a spec-key axis's values (``tasks.grid.Axis``)
            _set(task, key, values)
        params: dict[str, Any] = {}
        _apply("params", params, o)
        if o.schema is not None:  # the schema itself, so the replay rescores without the file
            params["schema"] = read_schema_file(Path(o.schema))
        if params:
            given = task.get("params")
            task["params"] = {**(given if isinstance(given, dict) else {}), **params}
    if o.task_options:
        from conformbench.tasks.task_options import apply_task_options

        apply_task_options(chosen, dict(o.task_options))
    return chosen


def _models(base: list[dict[str, Any]], o: RunOptions) -> list[dict[str, Any]]:
    if o.backend or o.model or o.base_url or o.label:
        backend = o.backend or "llamacpp"
        label = o.label or default_label(backend, o.model)
        one: dict[str, Any] = {"label": label, "backend": backend}
        _set(one, "model", o.model)
        if o.base_url:  # one URL as a string, as before pools, so its replay header is unchanged
            one["base_url"] = o.base_url[0] if len(o.base_url) == 1 else list(o.base_url)
        base = [one]
    base = [dict(m) for m in base]
    for model in base:
        _apply("model", model, o)
        _backend_options(model, dict(o.backend_options))
    return base


def _backend_options(model: dict[str, Any], given: dict[str, Any]) -> None:
    """Check the model's backend options (the spec's ``extra`` table, then
    the flags on top) against what its backend declares, and put the flags'
    in its ``extra`` table. Keys a backend does not declare in a spec's own
    table are left to the backend, which refuses unknown ones."""
    options = model.get("extra", {})
    if not isinstance(options, dict):  # pydantic says what is wrong
        return
    backend = str(model.get("backend", "llamacpp"))
    if not given and not options:
        return
    declared = {o.name for o in options_of(backend)}
    check_backend_options(backend, {k: v for k, v in options.items() if k in declared},
                          lambda option: f"extra.{option.name}", by="name")
    checked = check_backend_options(backend, given, lambda option: option.cli_flag)
    if checked:
        model["extra"] = {**options, **checked}


def _capped(task_data: list[Any]) -> list[Any]:
    """Each task's items capped by ``CONFORMBENCH_TEST_SIZE`` (runner/test_size.py): a task
    without ``n`` (all its items) gets the cap as its ``n``."""
    size = test_size()
    if size is None:
        return task_data
    for task in task_data:
        if isinstance(task, dict):
            n = task.get("n")
            task["n"] = min(n, size) if isinstance(n, int) and not isinstance(n, bool) else size
    return task_data


def build_spec(spec_file: Path | Mapping[str, Any] | None, o: RunOptions) -> RunSpec:
    """The spec of a ``run`` command: a TOML file (or the same tables as a
    mapping) or the default run (or, with --task, just those tasks), then
    the flags on top."""
    if isinstance(spec_file, Mapping):
        check_settings_data(spec_file, "run spec")  # before deepcopy recurses into it
        source, data = "run spec", copy.deepcopy(dict(spec_file))
    else:
        source = str(spec_file) if spec_file else "run options"
        data = load_spec_file(spec_file) if spec_file else default_spec_data()
    data.setdefault("models", [dict(DEFAULT_MODEL)])
    if isinstance(data.get("tasks"), list) and isinstance(data.get("models"), list):
        data["tasks"] = _capped(_tasks(data["tasks"], o))
        data["models"] = _models(data["models"], o)
    decoding = data.setdefault("decoding", {})
    if isinstance(decoding, dict):  # else pydantic reports the bad type
        _apply("decoding", decoding, o)
    _apply("run", data, o)
    if o.no_canary:
        data["canary"] = False
    data["quiet"] = o.quiet or bool(data.get("quiet", False))
    data["json_summary"] = o.json_summary or bool(data.get("json_summary", False))
    return parse_spec(data, source)
