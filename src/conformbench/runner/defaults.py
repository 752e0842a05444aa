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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformbench.backends.base import constraint_side
from conformbench.backends.llamacpp.batched import batched_option
from conformbench.backends.transformers.loading import check_device, check_dtype
from conformbench.errors import UsageError
from conformbench.records.spec import RunSpec
from conformbench.runner.spec import load_spec_file, parse_spec

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SIZES",
    "DefaultSizes",
    "SpecOverrides",
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


@dataclass(frozen=True)
class SpecOverrides:
    """CLI flags. Task flags apply to every task of the spec; model flags
    replace its models with one; unset (None/empty) flags change nothing."""

    tasks: tuple[str, ...] = ()
    n: int | None = None
    seed: int | None = None
    arms: tuple[str, ...] = ()
    engines: tuple[str, ...] = ()
    schema_formats: tuple[str, ...] = ()
    output_formats: tuple[str, ...] = ()
    shots: tuple[int, ...] = ()
    #: the task option prompt_style (gsm8k, bfcl-simple: conformbench | validbutwrong)
    prompt_style: str | None = None
    shots_from: Path | None = None
    #: the tasks' dataset (custom: a question/answer JSONL; ConCodeEval: a built dataset)
    dataset: Path | None = None
    #: the custom task's answer matcher (task options match, normalize, tolerance)
    match: str | None = None
    normalize: str | None = None
    tolerance: float | None = None
    backend: str | None = None
    model: str | None = None
    label: str | None = None
    base_url: str | None = None
    threads: int | None = None
    #: HTTP backends: structured-output dialect, endpoint, requests in flight,
    #: seconds per request, environment variable holding the API key
    dialect: str | None = None
    endpoint: str | None = None
    concurrency: int | None = None
    timeout_s: float | None = None
    api_key_env: str | None = None
    #: the transformers backend: weights' dtype and device (``extra.dtype``, ``extra.device``)
    dtype: str | None = None
    device: str | None = None
    #: the llamacpp backend: sequences decoded together, 0 = off (``extra.batched``)
    batched: int | None = None
    max_tokens: int | None = None
    free_tokens: int | None = None
    json_tokens: int | None = None
    packaging_tokens: int | None = None
    loop_stop: bool | None = None
    temperature: float | None = None
    decode_seed: int | None = None
    #: generations per item and condition (``[decoding] samples``)
    samples: int | None = None
    beams: int | None = None
    attention: bool | None = None
    out: Path | None = None
    no_canary: bool = False
    quiet: bool = False
    json_summary: bool = False
    #: check ``format`` when scoring (None: the spec's own, default annotations)
    format_assertion: bool | None = None


def _set(target: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != ():
        target[key] = list(value) if isinstance(value, tuple) else value


def _tasks(base: list[dict[str, Any]], o: SpecOverrides) -> list[dict[str, Any]]:
    by_name = {t.get("name"): t for t in base}
    chosen = [dict(by_name.get(n, {"name": n})) for n in o.tasks] if o.tasks else base
    for task in chosen:
        for key in ("n", "seed", "arms", "engines", "schema_formats", "output_formats",
                    "shots"):
            _set(task, key, getattr(o, key))
        _set(task, "shots_from", str(o.shots_from) if o.shots_from else None)
        _set(task, "dataset", str(o.dataset) if o.dataset else None)
        if o.max_tokens is not None:
            for key in ("max_tokens", "free_tokens", "json_tokens", "packaging_tokens"):
                task.pop(key, None)
        for key in ("free_tokens", "json_tokens", "packaging_tokens"):
            _set(task, key, getattr(o, key))
        _params(task, {"prompt_style": o.prompt_style, "match": o.match,
                       "normalize": o.normalize, "tolerance": o.tolerance})
    return chosen


def _params(task: dict[str, Any], given: dict[str, Any]) -> None:
    """Put the task-option flags that are set in the task's params table."""
    chosen = {k: v for k, v in given.items() if v is not None}
    if chosen:
        params = task.get("params")
        task["params"] = {**(params if isinstance(params, dict) else {}), **chosen}


def _models(base: list[dict[str, Any]], o: SpecOverrides) -> list[dict[str, Any]]:
    if o.backend or o.model or o.base_url or o.label:
        backend = o.backend or "llamacpp"
        label = o.label or (Path(o.model).stem if o.model else backend)
        one: dict[str, Any] = {"label": label, "backend": backend}
        _set(one, "model", o.model)
        _set(one, "base_url", o.base_url)
        base = [one]
    base = [dict(m) for m in base]
    extra = {"response_format_dialect": o.dialect, "endpoint": o.endpoint, "api_key_env": o.api_key_env}
    own: dict[str, tuple[_BackendFlags, dict[str, Any]]] = {
        "transformers": (_HF_FLAGS, {"dtype": o.dtype, "device": o.device}),
        "llamacpp": (_LLAMACPP_FLAGS, {"batched": o.batched}),
    }
    for model in base:
        _set(model, "threads", o.threads)
        _set(model, "concurrency", o.concurrency)
        _set(model, "timeout_s", o.timeout_s)
        _http_options(model, {k: v for k, v in extra.items() if v is not None})
        for owner, (flags, values) in own.items():
            _backend_options(model, owner, flags, {k: v for k, v in values.items() if v is not None})
    return base


_FLAGS = {"response_format_dialect": "--dialect", "endpoint": "--endpoint", "api_key_env": "--api-key-env"}


def _http_options(model: dict[str, Any], given: dict[str, Any]) -> None:
    """Put the HTTP-only flags in the model's ``extra`` table."""
    if not given:
        return
    backend = str(model.get("backend", "llamacpp"))
    if constraint_side(backend) != "server":
        flags = ", ".join(_FLAGS[k] for k in given)
        raise UsageError(f"{flags} apply to HTTP backends (--backend openai), not {backend!r}")
    options = model.get("extra", {})
    if isinstance(options, dict):  # else pydantic says what is wrong
        model["extra"] = {**options, **given}


#: a backend's own flag: extra key -> (flag, the backend's own check of the value)
_BackendFlags = Mapping[str, tuple[str, Callable[[Any, str], object]]]

#: transformers-only flags
_HF_FLAGS: _BackendFlags = {
    "dtype": ("--dtype", lambda value, flag: check_dtype(str(value), flag)),
    "device": ("--device", lambda value, flag: check_device(str(value), flag)),
}


def _check_batched(value: Any, flag: str) -> int:
    try:
        return batched_option(value)
    except UsageError as exc:
        raise UsageError(str(exc).replace("batched", flag, 1)) from None


#: llamacpp-only flags
_LLAMACPP_FLAGS: _BackendFlags = {"batched": ("--batched", _check_batched)}


def _backend_options(model: dict[str, Any], owner: str, flags: _BackendFlags, given: dict[str, Any]) -> None:
    """Put the flags that belong to backend ``owner`` in the model's
    ``extra`` table, their values checked as the backend checks them; with
    another backend they are a usage error."""
    if not given:
        return
    backend = str(model.get("backend", "llamacpp"))
    if backend != owner:
        names = ", ".join(flags[k][0] for k in given)
        verb = "applies" if len(given) == 1 else "apply"
        raise UsageError(f"{names} {verb} to the {owner} backend (--backend {owner}), not {backend!r}")
    for key, value in given.items():
        flag, check = flags[key]
        check(value, flag)
    options = model.get("extra", {})
    if isinstance(options, dict):  # else pydantic says what is wrong
        model["extra"] = {**options, **given}


def build_spec(spec_file: Path | Mapping[str, Any] | None, o: SpecOverrides) -> RunSpec:
    """The spec of a ``run`` command: a TOML file (or the same tables as a
    mapping) or the default run (or, with --task, just those tasks), then
    the flags on top."""
    if isinstance(spec_file, Mapping):
        source, data = "run spec", copy.deepcopy(dict(spec_file))
    else:
        source = str(spec_file) if spec_file else "run options"
        data = load_spec_file(spec_file) if spec_file else default_spec_data()
    data.setdefault("models", [dict(DEFAULT_MODEL)])
    if isinstance(data.get("tasks"), list) and isinstance(data.get("models"), list):
        data["tasks"] = _tasks(data["tasks"], o)
        data["models"] = _models(data["models"], o)
    decoding = data.setdefault("decoding", {})
    if isinstance(decoding, dict):  # else pydantic reports the bad type
        _set(decoding, "max_tokens", o.max_tokens)
        _set(decoding, "temperature", o.temperature)
        _set(decoding, "seed", o.decode_seed)
        _set(decoding, "samples", o.samples)
        _set(decoding, "loop_stop", o.loop_stop)
        _set(decoding, "beams", o.beams)
        _set(decoding, "attention", o.attention)
    _set(data, "out", str(o.out) if o.out else None)
    if o.no_canary:
        data["canary"] = False
    _set(data, "format_assertion", o.format_assertion)
    data["quiet"] = o.quiet or bool(data.get("quiet", False))
    data["json_summary"] = o.json_summary or bool(data.get("json_summary", False))
    return parse_spec(data, source)
