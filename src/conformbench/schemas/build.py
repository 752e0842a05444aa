"""Building a dataset directory: generated or external schemas become
SchemaCase records (renderings in every schema format plus oracle
instances), written as DIR/dataset.jsonl, DIR/stats.json and
DIR/excluded.json. Output is byte-identical for the same inputs."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from conformbench.errors import SchemaError, UsageError
from conformbench.files import write_files
from conformbench.formats.base import PAPER_SCHEMA_FORMATS
from conformbench.jsontypes import Schema
from conformbench.schemas.case import ExcludedSchema, InexactKeywordRecord, SchemaCase, dump_case
from conformbench.schemas.config import GeneratorConfig
from conformbench.schemas.dataset_stats import DatasetStats, dataset_stats
from conformbench.schemas.external import ExternalSchema, count_external, read_external
from conformbench.schemas.generator import generate
from conformbench.schemas.oracle import find_invalid, find_valid
from conformbench.schemas.walk import depth_of, root_type_of
from conformbench.validator.schema_validator import validator_for

__all__ = [
    "BuildOptions",
    "BuildResult",
    "build_dataset",
    "build_size",
    "external_case",
    "prepare_output",
    "render_all",
    "render_available",
]

DEFAULT_N = 602


@dataclass(frozen=True)
class BuildOptions:
    out: Path
    #: how many schemas to generate (default 602); with ``schemas``, the
    #: first n entries (default all)
    n: int | None = None
    seed: int = 0
    config: GeneratorConfig = field(default_factory=GeneratorConfig)
    #: external schemas (a directory of *.json or a JSONL file) instead of the generator
    schemas: Path | None = None
    formats: tuple[str, ...] = PAPER_SCHEMA_FORMATS
    #: called with (label, 1) after each schema (progress display)
    tick: Callable[[str, int], None] | None = field(default=None, compare=False)
    #: called with a step's name before a step that counts nothing yet
    #: (reading and bundling every external schema), so a log says it at once
    stage: Callable[[str], None] | None = field(default=None, compare=False)

    def _tick(self, label: str) -> None:
        if self.tick is not None:
            self.tick(label, 1)

    def _stage(self, text: str) -> None:
        if self.stage is not None:
            self.stage(text)


def build_size(options: BuildOptions) -> int:
    """How many schemas a build goes through (its progress total)."""
    if options.schemas is None:
        return options.n if options.n is not None else DEFAULT_N
    found = count_external(options.schemas)
    return found if options.n is None else min(found, options.n)


@dataclass(frozen=True)
class BuildResult:
    cases: list[SchemaCase]
    excluded: list[ExcludedSchema]
    stats: DatasetStats
    out: Path


def _render(schema: Schema | bool, fmt: str, inexact: list[InexactKeywordRecord] | None) -> str:
    """One format's text; for python, the keywords it states inexactly are
    added to ``inexact`` (from the same rendering, so nothing renders twice)."""
    from conformbench.formats.base import schema_formats
    from conformbench.formats.python.format import PythonSchemaFormat, python_rendering

    plugin = schema_formats.get(fmt)
    if inexact is None or plugin is not PythonSchemaFormat:
        return plugin().render(schema)
    made = python_rendering(schema)
    inexact.extend(InexactKeywordRecord(keyword=i.keyword, schema_path=i.schema_path, reason=i.reason)
                   for i in made.inexact)
    return made.text


def render_all(schema: Schema, formats: tuple[str, ...],
               inexact: list[InexactKeywordRecord] | None = None) -> dict[str, str]:
    """The schema's text in every format (renderer errors propagate); with
    ``inexact``, the python rendering's inexact keywords are added to it."""
    return {fmt: _render(schema, fmt, inexact) for fmt in formats}


def render_available(
    schema: Schema | bool, formats: tuple[str, ...], inexact: list[InexactKeywordRecord] | None = None
) -> tuple[dict[str, str], dict[str, str]]:
    """The schema's text in each format that can express it, and for every
    other format the reason it cannot (a renderer's refusal, or any error a
    renderer raised on this untrusted schema); ``inexact`` as in render_all."""
    from conformbench.formats.base import UnrenderableSchemaError

    renderings: dict[str, str] = {}
    missing: dict[str, str] = {}
    for fmt in formats:
        try:
            renderings[fmt] = _render(schema, fmt, inexact)
        except UnrenderableSchemaError as exc:
            missing[fmt] = str(exc)
        except RecursionError:
            missing[fmt] = f"the {fmt} renderer cannot follow a schema nested this deeply"
        except Exception as exc:  # noqa: BLE001 - untrusted input: a renderer failure is a reason
            missing[fmt] = f"the {fmt} renderer failed: {type(exc).__name__}: {exc}"
    return renderings, missing


def build_dataset(options: BuildOptions) -> BuildResult:
    if options.n is not None and options.n < 1:
        raise UsageError("--n must be at least 1")
    prepare_output(options)
    if options.schemas is not None:
        cases, excluded = _external_cases(options)
    else:
        cases, excluded = _generated_cases(options), []
    stats = dataset_stats(cases, excluded=len(excluded))
    _write(options.out, cases, excluded, stats)
    return BuildResult(cases, excluded, stats, options.out)


def _generated_cases(options: BuildOptions) -> list[SchemaCase]:
    cases = []
    n = options.n if options.n is not None else DEFAULT_N
    for index, made in enumerate(generate(n, options.seed, options.config), start=1):
        ident = f"gen-{index:04d}"
        inexact: list[InexactKeywordRecord] = []
        try:
            renderings = render_all(made.schema, options.formats, inexact)
        except Exception as exc:  # a renderer bug: say which schema, loudly
            raise RuntimeError(f"rendering generated schema {ident} failed: {exc!r}") from exc
        cases.append(SchemaCase(
            id=ident, schema=made.schema, renderings=renderings, python_inexact=inexact,
            valid_instance=made.valid_instance, invalid_instances=list(made.invalid_instances),
            root_type=root_type_of(made.schema), depth=depth_of(made.schema), source="generated",
        ))
        options._tick("generated")
    return cases


def _external_cases(options: BuildOptions) -> tuple[list[SchemaCase], list[ExcludedSchema]]:
    assert options.schemas is not None
    options._stage(f"reading {options.schemas.name}")
    cases: list[SchemaCase] = []
    excluded: list[ExcludedSchema] = []
    seen: set[str] = set()
    # islice: an entry past -n is never read (a folder is parsed as it is reached)
    for entry in islice(read_external(options.schemas), options.n):
        if isinstance(entry, ExternalSchema) and entry.id in seen:
            entry = ExcludedSchema(id=entry.id, source=entry.source, reason="duplicate id")
        if isinstance(entry, ExcludedSchema):
            excluded.append(entry)
        else:
            seen.add(entry.id)
            made = external_case(entry, options.formats)
            if isinstance(made, SchemaCase):
                cases.append(made)
            else:
                excluded.append(made)
        options._tick(options.schemas.name)
    return cases, excluded


def external_case(entry: ExternalSchema, formats: tuple[str, ...]) -> SchemaCase | ExcludedSchema:
    """The case of one external schema, or its exclusion with the reason.
    Never raises on any schema: a failure nobody foresaw becomes an exclusion
    that names the error, so one odd file cannot lose a whole build."""
    try:
        return _external_case(entry, formats)
    except RecursionError:
        reason = "schema nested too deeply to process"
    except Exception as exc:  # noqa: BLE001 - untrusted input; the reason names the error
        reason = f"internal error while building the case: {type(exc).__name__}: {exc}"
    return ExcludedSchema(id=entry.id, source=entry.source, reason=reason)


def _external_case(entry: ExternalSchema, formats: tuple[str, ...]) -> SchemaCase | ExcludedSchema:
    def exclude(reason: str) -> ExcludedSchema:
        return ExcludedSchema(id=entry.id, source=entry.source, reason=reason)

    schema: Any = entry.schema
    if not isinstance(schema, (dict, bool)):
        return exclude(f"not a schema: a JSON {type(schema).__name__}, not an object or boolean")
    try:
        validator_for(schema)  # type: ignore[arg-type]
    except SchemaError as exc:
        return exclude(str(exc))
    valid = find_valid(schema)
    if not valid.found:
        label = "unsatisfiable" if valid.status == "unsatisfiable" else "no valid instance found"
        return exclude(f"{label}: {valid.reason}")
    inexact: list[InexactKeywordRecord] = []
    renderings, missing = render_available(schema, formats, inexact)
    if not renderings:
        return exclude("no schema format can express it: " + "; ".join(missing.values()))
    invalid = find_invalid(schema, valid.instance)
    return SchemaCase(
        id=entry.id, schema=schema, renderings=renderings, missing_formats=missing, python_inexact=inexact,
        valid_instance=valid.instance, invalid_instances=invalid.instances, unisolated=invalid.unisolated,
        root_type=root_type_of(schema), depth=depth_of(schema), source=entry.source,
    )


def prepare_output(options: BuildOptions) -> None:
    """Create the output directory before any work, so that a long build
    never fails at its last step; UsageError naming the reason."""
    try:
        options.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write the dataset to {options.out}: {exc.strerror or exc}") from None


def _write(out: Path, cases: list[SchemaCase], excluded: list[ExcludedSchema], stats: DatasetStats) -> None:
    """The three files whole, or none of them (``files.write_files``): a kill
    or a full disk never leaves half a dataset, or a new one beside old stats."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write the dataset to {out}: {exc.strerror or exc}") from None
    write_files({
        out / "dataset.jsonl": "".join(dump_case(c) + "\n" for c in cases),
        out / "stats.json": _pretty(stats.to_json()),
        out / "excluded.json": _pretty([e.model_dump(mode="json") for e in excluded]),
    })


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
