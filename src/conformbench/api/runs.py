"""What the ``run``, ``score`` and ``reproduce`` commands do, the library's entry points:

    import conformbench
    done = conformbench.run(tasks=["gsm8k"], n=4, arms=["constrained[answer]"])
    done.run.results[0].arms          # scored records (report.json's content)
    done.files.markdown               # conformbench-out/report.md
    again = conformbench.score(done.files.json.parent / "replay.jsonl")

``run`` takes a spec file (or nothing: the default run) and the options
the command line takes: a ``RunOptions`` (one field per flag), or the same
as keyword arguments (typed: ``RunKeywords``), with each backend's own
options (``backends/backend_options.py``) in ``backend_options`` (or, untyped,
as further keywords); an unknown keyword is refused with a did-you-mean,
never ignored.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import sys
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Unpack

from pydantic import ConfigDict, TypeAdapter, ValidationError

from conformbench.backends.backend_options import declared_options
from conformbench.errors import UsageError
from conformbench.registry import did_you_mean
from conformbench.runner.run_options import RunKeywords, RunOptions

# The runner, scoring and reports are imported where they are used, so that
# checking a run's options (``run_options``) loads none of them (nor numpy,
# jsonschema or a backend's modules): tests/test_lazy_imports.py.
if typing.TYPE_CHECKING:
    from conformbench.records.spec import RunSpec
    from conformbench.reports.publish import Published
    from conformbench.runner.ledger.shards import Shard
    from conformbench.runner.run import RunSummary
    from conformbench.scoring.reproduce import Reproduction

__all__ = ["RunOptions", "generate", "reproduce", "run", "run_options", "score"]

_HINTS = typing.get_type_hints(RunOptions)
#: what each option takes as a keyword, declared once in RunKeywords (held
#: to RunOptions by tests/runner/test_run_options.py)
_KEYWORDS = typing.get_type_hints(RunKeywords)
_ADAPTERS: dict[str, TypeAdapter[Any]] = {}


def _kinds(hint: Any) -> tuple[type, ...]:
    """The classes a value of type ``hint`` may be (None dropped)."""
    if typing.get_origin(hint) is tuple:
        return (tuple,)
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    return tuple(typing.get_origin(a) or a for a in args)


def _takes(key: str) -> str:
    """What RunOptions field ``key`` takes, for a message."""
    hint = _HINTS[key]
    kinds = _kinds(hint)
    if tuple in kinds:
        return f"a {typing.get_args(hint)[0].__name__} or a list of them"
    if Path in kinds:
        return "a path (str or Path)"
    return " or ".join(k.__name__ for k in kinds)


def _checked(key: str, value: Any) -> Any:
    """``value`` as RunOptions field ``key`` holds it, or a UsageError
    saying what the option takes: the Python API's arguments are checked
    here, at the boundary, as the command line's are by its parser, by
    pydantic (strict) against the keyword's declared type."""
    if key not in _ADAPTERS:
        _ADAPTERS[key] = TypeAdapter(_KEYWORDS[key], config=ConfigDict(strict=True))
    try:
        value = _ADAPTERS[key].validate_python(value)
    except ValidationError:
        raise UsageError(f"run option {key}: expected {_takes(key)}, not {value!r}") from None
    kinds = _kinds(_HINTS[key])
    if tuple in kinds:  # a list option: one value or a list of them
        return (value,) if isinstance(value, str | int) else tuple(value)
    if Path in kinds and value is not None:
        if not str(value):
            raise UsageError(f"run option {key}: expected {_takes(key)}, not {value!r}")
        return Path(value)
    return value


def run_options(values: Mapping[str, Any]) -> RunOptions:
    """Keyword arguments as a ``RunOptions``: its fields, and the options
    the backends declare (``batched=4``); an unknown name is refused with a
    did-you-mean. A name or a path may stand for a list of one."""
    fields = [f.name for f in dataclasses.fields(RunOptions) if f.name not in _OWN_OPTIONS]
    declared = declared_options()
    rest = [key for key in values if key not in fields and key not in declared]
    # the tasks' own options and axes are read (every task's module
    # imported) only for a keyword that is neither a run option nor a backend's
    by_axes = _axis_options() if rest else {}
    by_tasks = _task_options([*fields, *by_axes]) if rest else {}
    for key in rest:
        if key not in by_tasks and key not in by_axes:
            known = [*fields, *declared, *by_axes, *by_tasks]
            raise UsageError(f"unknown run option {key!r}{did_you_mean(key, known)}; known: {', '.join(known)}")
    fixed = {k: _checked(k, v) for k, v in values.items() if k in fields}
    backend_options = tuple((k, v) for k, v in values.items() if k in declared and v is not None)
    task_options = tuple((k, v) for k, v in values.items() if k in by_tasks and v is not None)
    return RunOptions(**fixed, backend_options=backend_options, task_options=task_options,
                      axes=_axes(values, by_axes))


#: RunOptions fields that hold the backends' and the tasks' own options and
#: the tasks' axes (not keywords themselves)
_OWN_OPTIONS = ("backend_options", "task_options", "axes")


def _task_options(fields: list[str]) -> dict[str, object]:
    from conformbench.tasks.task_options import declared_task_options

    return dict(declared_task_options(frozenset(fields)))


def _axis_options() -> dict[str, Any]:
    from conformbench.tasks.task_options import declared_axis_options

    return dict(declared_axis_options())


def _axes(values: Mapping[str, Any], declared: dict[str, Any]) -> tuple[tuple[str, tuple[str | int, ...]], ...]:
    """The keywords that choose a spec-key axis's values (``schema_formats=``),
    each checked against the type the axis declares; unset ones left out."""
    if not declared:
        return ()
    from conformbench.tasks.task_options import axis_values

    return tuple((k, axis_values(k, v, declared)) for k, v in values.items() if k in declared)


def detect_share(points: float | None) -> float:
    """``--detect`` in points (10 = a 10-point difference) as a share."""
    from conformbench.scoring.paired import DEFAULT_DETECT

    if points is None:
        return DEFAULT_DETECT
    if isinstance(points, bool) or not isinstance(points, int | float):
        raise UsageError(f"--detect {points!r}: expected a difference in points, above 0 and at most 100")
    if not 0 < points <= 100:
        raise UsageError(f"--detect {points:g}: expected a difference in points, above 0 and at most 100")
    return points / 100


def generate(spec: Path | str | Mapping[str, Any] | None, options: RunOptions, *, fail_if: Iterable[str] = (),
             force: bool = False, shard: Shard | None = None) -> tuple[RunSummary, RunSpec]:
    """The generation half of ``run``, and all of a sharded run's part:
    the spec built and checked (gates included) before the model loads,
    then generated into OUT (a part into its own shard file)."""
    from conformbench.runner.defaults import build_spec
    from conformbench.runner.run import execute
    from conformbench.scoring.gate import parse_gate
    from conformbench.scoring.gate_plan import check_gates_for_spec

    gates = [parse_gate(text) for text in fail_if]
    source = Path(spec) if isinstance(spec, str | Path) else spec
    run_spec = build_spec(source, options)
    check_gates_for_spec(gates, run_spec)  # an unknown metric is refused before the model loads
    return execute(run_spec, force=force, shard=shard), run_spec


def run(spec: Path | str | Mapping[str, Any] | None = None, *, fail_if: Iterable[str] = (),
        force: bool = False, detect: float | None = None, options: RunOptions | None = None,
        backend_options: Mapping[str, object] | None = None, **overrides: Unpack[RunKeywords]) -> Published:
    """Generate live (resuming OUT/replay.jsonl where it exists), score and
    write the reports; ``fail_if`` gates are checked (``exit_code`` says
    whether one tripped; a gate matching an n/a value raises
    ``GateNotEvaluableError`` once the reports are written). ``spec``: a TOML spec file, the same tables as a
    mapping, or None for the default run. ``detect``: the difference, in
    points, each comparison states the items needed for (default 10).
    The run's options: a ``RunOptions`` (``options``), or its fields as
    keywords (``n=4``), the backends' own options in ``backend_options``
    (``{"batched": 2}``; at run time also taken as further keywords).
    Progress goes to stderr unless ``quiet=True``."""
    from conformbench.reports.publish import publish
    from conformbench.scoring.gate import parse_gate

    if spec is not None and not isinstance(spec, str | os.PathLike | Mapping):
        raise UsageError(f"spec: expected a TOML spec file's path or a mapping of its tables, not {spec!r}")
    if isinstance(fail_if, str):
        fail_if = [fail_if]
    gates = [parse_gate(_gate_text(text)) for text in fail_if]
    share = detect_share(detect)
    given: dict[str, Any] = {**overrides, **_backend_keywords(backend_options, overrides)}
    if options is not None and given:
        raise UsageError("give the run's options as options=RunOptions(...) or as keywords, not both")
    summary, run_spec = generate(spec, options or run_options(given), fail_if=fail_if, force=force)
    from conformbench.records.spec import SCORING_PARAMS

    # the matcher is a scoring choice: this run's, over a resumed replay's header
    scoring = {k: v for t in run_spec.tasks for k, v in t.params.items() if k in SCORING_PARAMS}
    done = publish([summary.replay], run_spec.out, gates, run_spec.format_assertion, share, None, scoring)
    return dataclasses.replace(done, generation=summary, spec=run_spec)


def _backend_keywords(values: Mapping[str, object] | None, overrides: Mapping[str, object]) -> dict[str, object]:
    """``backend_options`` checked as a mapping of option names (each then
    checked by ``run_options`` against what the backends declare)."""
    if values is None:
        return {}
    if not isinstance(values, Mapping) or not all(isinstance(k, str) for k in values):
        raise UsageError(f"backend_options: expected a mapping of option names to values, not {values!r}")
    run_keys = sorted(set(values) & (set(_HINTS) | set(_KEYWORDS)) - set(_OWN_OPTIONS))
    if run_keys:
        raise UsageError(f"{run_keys[0]!r} is a run option, not a backend option: give it as {run_keys[0]}=...")
    twice = sorted(set(values) & set(overrides))
    if twice:
        raise UsageError(f"backend option {twice[0]!r} given twice: as a keyword and in backend_options")
    return dict(values)


def _signature_from_options() -> inspect.Signature:
    """``run``'s signature with a typed keyword per ``RunOptions`` field in
    place of ``**overrides`` (what ``help(conformbench.run)`` and editors
    show), the backends' own options still taken as further keywords."""
    sig = inspect.signature(run)
    fixed = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    typed = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=f.type,
                               default=() if f.default is dataclasses.MISSING else f.default)
             for f in dataclasses.fields(RunOptions) if f.name not in _OWN_OPTIONS]
    fields = {p.name for p in typed}  # then the shipped tasks' axes, as RunKeywords types them
    typed += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, annotation=hint, default=())
              for k, hint in _KEYWORDS.items() if k not in fields]
    rest = inspect.Parameter("backend_keywords", inspect.Parameter.VAR_KEYWORD, annotation="Any")
    return sig.replace(parameters=[*fixed, *typed, rest])


run.__signature__ = _signature_from_options()  # type: ignore[attr-defined]


def score(replays: Path | str | Sequence[Path | str], *, out: Path | str | None = None,
          fail_if: Iterable[str] = (), format_assertion: bool | None = None,
          detect: float | None = None, against: Sequence[Path | str] = (),
          task_params: Mapping[str, Any] | None = None) -> Published:
    """Rescore replay files alone (no model) and write every report into
    ``out`` (default: the first replay's folder). ``against``: replays of
    another decoding of the same items (e.g. the greedy ones beside a beam
    search run), paired with these by item and condition in the report.
    ``task_params``: scoring params over the replays' (``{"match": "exact"}``:
    another matcher, no model). A ``fail_if`` gate matching an n/a value
    raises ``GateNotEvaluableError`` once the reports are written."""
    from conformbench.reports.publish import publish
    from conformbench.scoring.gate import parse_gate

    paths = [Path(replays)] if isinstance(replays, str | os.PathLike) else _paths(replays, "replays")
    if out is not None and not isinstance(out, str | os.PathLike):
        raise UsageError(f"out: expected a folder path (str or Path), not {out!r}")
    if isinstance(fail_if, str):
        fail_if = [fail_if]
    if not paths:
        raise UsageError("score needs at least one replay file")
    gates = [parse_gate(_gate_text(text)) for text in fail_if]
    return publish(paths, Path(out) if out is not None else paths[0].parent, gates, format_assertion,
                   detect_share(detect), _paths(against, "against") or None, dict(task_params or {}))


def _gate_text(text: Any) -> str:
    if not isinstance(text, str):
        raise UsageError(f"fail_if: expected gate expressions (str), not {text!r}")
    return text


def _paths(values: Any, what: str) -> list[Path]:
    """Replay paths given as a list (a single one as a str or Path)."""
    if isinstance(values, str | os.PathLike):
        values = [values]
    if not isinstance(values, Sequence) or not all(isinstance(v, str | os.PathLike) and str(v) for v in values):
        raise UsageError(f"{what}: expected replay file paths (str or Path), not {values!r}")
    return [Path(v) for v in values]


def _replay_path(replay: Path | str) -> Path:
    """A replay file, or the name of a shipped one (``conformbench demo --list``)."""
    from conformbench.runner.shipped import shipped_replays

    path = Path(replay)
    if path.is_file() or path.suffix:
        return path
    shipped = shipped_replays()
    if str(replay) in shipped:
        return shipped[str(replay)]
    if not path.exists() and len(path.parts) == 1:  # a mistyped shipped name, not a file
        names = sorted(shipped)
        raise UsageError(f"no replay file or shipped replay named {str(replay)!r}"
                         f"{did_you_mean(str(replay), names)}; shipped: {', '.join(names)} (conformbench demo --list)")
    return path


def reproduce(replay: Path | str, *, out: Path | str = "conformbench-out/reproduce", n: int | None = None,
              detect: float | None = None, quiet: bool = False, base_url: str | None = None,
              api_key_env: str | None = None, model: str | None = None, dataset: Path | str | None = None,
              shots_from: Path | str | None = None) -> Reproduction:
    """Rerun ``replay``'s spec on this machine (all items, or the first ``n``
    of each task) into ``out``/replay.jsonl, resuming there, and compare the
    two: identical texts, flipped verdicts, each headline metric's shift
    (``scoring.reproduce``); the comparison is also written to
    ``out``/reproduce.json. ``replay``: a file or a shipped replay's name.
    A replay is data: the server (``base_url``), the key's environment
    variable (``api_key_env``), a model file (``model``) and a dataset or
    shots file (``dataset``, ``shots_from``) are the caller's, never the
    replay's (``runner.ledger``: ``reproduction``); what they replace is shown on
    stderr unless ``quiet``."""
    from conformbench.files import write_files
    from conformbench.reports.rescore import compare_rerun
    from conformbench.runner.ledger import ReproduceChoices
    from conformbench.runner.run import reproduce as rerun

    _check_reproduce_arguments(replay, out, n, quiet)
    choices = ReproduceChoices(
        base_url=_text_or_none("base_url", base_url), api_key_env=_text_or_none("api_key_env", api_key_env),
        model=_text_or_none("model", model), dataset=_path_or_none("dataset", dataset),
        shots_from=_path_or_none("shots_from", shots_from))
    path = _replay_path(replay)
    shares: list[float] = []

    def before(notes: list[str]) -> None:
        """The replacements shown, and --detect checked, as the run starts."""
        if not quiet:
            for note in notes:
                print(f"reproduce: {note}", file=sys.stderr)
        shares.append(detect_share(detect))

    summary = rerun(path, out, quiet, choices, n, before)
    done = compare_rerun(path, summary.replay, shares[0])
    # whole or not at all, as every report is
    write_files({Path(out) / "reproduce.json": done.model_dump_json(indent=2) + "\n"})
    return done


def _check_reproduce_arguments(replay: object, out: object, n: object, quiet: object) -> None:
    """``reproduce``'s own arguments checked as ``run``'s are, before anything
    is read or created: one UsageError naming the argument."""
    if not isinstance(replay, str | os.PathLike) or not str(replay):
        raise UsageError(f"replay: expected a replay file's path or a shipped replay's name, not {replay!r}")
    if not isinstance(out, str | os.PathLike) or not str(out):
        raise UsageError(f"out: expected a folder path (str or Path), not {out!r}")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int)):
        raise UsageError(f"n: expected an int (items per task) or None, not {n!r}")
    if n is not None and not 1 <= n < 1 << 63:
        raise UsageError(f"--n {n}: expected at least 1" if n < 1 else "n: expected at most 2**63 - 1 items")
    if not isinstance(quiet, bool):
        raise UsageError(f"quiet: expected a bool, not {quiet!r}")


def _text_or_none(name: str, value: object) -> str | None:
    if value is not None and (not isinstance(value, str) or not value):
        raise UsageError(f"{name}: expected a non-empty str, not {value!r}")
    return value


def _path_or_none(name: str, value: object) -> Path | None:
    if value is not None and (not isinstance(value, str | os.PathLike) or not str(value)):
        raise UsageError(f"{name}: expected a path (str or Path), not {value!r}")
    return None if value is None else Path(value)
