"""The schema sets of the engine check, each schema with documents known to
be valid or invalid against it:

* ``json-schema-test-suite``: the official JSON-Schema-Test-Suite shipped in
  the package (one set per draft), instances and verdicts from the suite;
* ``generated``: the dataset generator's schemas (602 by default) with their
  oracle instances (one valid, one per constraint violating only it);
* a directory of ``*.json`` schemas or a JSONL file (``--schemas``), or a
  suite shipped under ``data/suites/``: real schemas, instances from the
  oracle where it finds them (a schema without any still counts for coverage).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformbench.errors import UsageError
from conformbench.files import JSON_SCHEMA_TEST_SUITE, shipped_data
from conformbench.jsontypes import JSONValue, Schema
from conformbench.registry import did_you_mean
from conformbench.schemas.case import ExcludedSchema
from conformbench.schemas.external import read_external
from conformbench.schemas.oracle import find_invalid, find_valid
from conformbench.validator.pattern_size import PatternTooLarge, check_size
from conformbench.validator.schema_validator import schema_patterns

__all__ = [
    "GENERATED",
    "SUITE_DRAFTS",
    "VALID_GROUP",
    "CheckSchema",
    "CheckSource",
    "Instance",
    "generated_source",
    "known_suites",
    "official_suite_source",
    "oversized_pattern",
    "schemas_source",
    "suite_sources",
]

GENERATED = "generated"
#: drafts of the shipped test suite that the check can run, by folder
SUITE_DRAFTS = {"2020-12": "draft2020-12", "7": "draft7"}
#: the group of the valid instance of a generated or real schema
VALID_GROUP = "(valid instances)"


@dataclass(frozen=True)
class Instance:
    description: str
    value: JSONValue
    valid: bool
    #: the keyword group its verdict is tallied under
    group: str


@dataclass(frozen=True)
class CheckSchema:
    id: str
    #: keyword group of the schema (the suite file name; the source for others)
    group: str
    description: str
    schema: Schema | bool
    instances: tuple[Instance, ...]


@dataclass(frozen=True)
class CheckSource:
    #: e.g. "json-schema-test-suite/draft2020-12", "generated", "schemas:dir"
    name: str
    #: the JSON Schema draft the set is written for ("" when unspecified)
    draft: str
    schemas: tuple[CheckSchema, ...]
    #: entries that are not schemas at all (unreadable, not JSON), with why
    excluded: tuple[ExcludedSchema, ...] = ()


def official_suite_source(draft: str = "2020-12", limit: int | None = None) -> CheckSource:
    """The shipped JSON-Schema-Test-Suite for ``draft`` (its optional/ tests,
    format assertions and bignums among them, are left out)."""
    folder = SUITE_DRAFTS.get(draft)
    if folder is None:
        hint = did_you_mean(draft, list(SUITE_DRAFTS))
        raise UsageError(f"the test suite has no draft {draft!r}{hint}; known: {', '.join(SUITE_DRAFTS)}")
    root = shipped_data(JSON_SCHEMA_TEST_SUITE) / "tests" / folder
    schemas = list(_suite_schemas(root))
    return CheckSource(f"{JSON_SCHEMA_TEST_SUITE}/{folder}", draft, tuple(schemas[:limit]))


def _suite_schemas(root: Path) -> Iterator[CheckSchema]:
    for path in sorted(root.glob("*.json")):
        group = path.stem
        for index, case in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            instances = tuple(
                Instance(test["description"], test["data"], bool(test["valid"]), group) for test in case["tests"]
            )
            yield CheckSchema(f"{group}/{index}", group, case["description"], case["schema"], instances)


def generated_source(n: int = 602, seed: int = 0, limit: int | None = None) -> CheckSource:
    """The generator's first ``n`` schemas (the dataset's, with the default
    config and seed) and their oracle instances."""
    from conformbench.schemas.config import GeneratorConfig
    from conformbench.schemas.generator import generate

    count = n if limit is None else min(n, limit)
    schemas = []
    for index, made in enumerate(generate(count, seed, GeneratorConfig()), start=1):
        instances = [Instance("the oracle's valid instance", made.valid_instance, True, VALID_GROUP)]
        instances += [
            Instance(f"violates {bad.keyword} at {bad.schema_path}", bad.instance, False, bad.keyword)
            for bad in made.invalid_instances
        ]
        schemas.append(CheckSchema(f"gen-{index:04d}", GENERATED, "", made.schema, tuple(instances)))
    return CheckSource(GENERATED, "", tuple(schemas))


def schemas_source(path: Path, name: str | None = None, limit: int | None = None) -> CheckSource:
    """Real schemas from a directory of *.json or a JSONL file, with oracle
    instances where the oracle finds them."""
    schemas: list[CheckSchema] = []
    excluded: list[ExcludedSchema] = []
    if limit is not None and limit <= 0:
        return CheckSource(name or f"schemas:{path.name}", "", (), ())
    for entry in read_external(path):  # read as reached: nothing past the limit is parsed
        if isinstance(entry, ExcludedSchema):
            excluded.append(entry)
        elif not isinstance(entry.schema, (dict, bool)):
            kind = type(entry.schema).__name__
            excluded.append(ExcludedSchema(id=entry.id, source=entry.source, reason=f"not a schema: a JSON {kind}"))
        elif (too_large := oversized_pattern(entry.schema)) is not None:
            excluded.append(ExcludedSchema(id=entry.id, source=entry.source, reason=too_large))
        else:
            schemas.append(CheckSchema(entry.id, name or path.name, entry.source, entry.schema,
                                       _oracle_instances(entry.schema)))
            if limit is not None and len(schemas) >= limit:
                break
    return CheckSource(name or f"schemas:{path.name}", "", tuple(schemas), tuple(excluded))


def oversized_pattern(schema: Schema | bool) -> str | None:
    """Why the schema is refused before any engine compiles it: a pattern
    whose counted repetitions unroll past the shared bound."""
    for pattern in schema_patterns(schema):
        try:
            check_size(pattern)
        except PatternTooLarge as exc:
            return str(exc)
    return None


def _oracle_instances(schema: Schema | bool) -> tuple[Instance, ...]:
    valid = find_valid(schema)
    if not valid.found:
        return ()
    try:
        invalid = find_invalid(schema, valid.instance).instances
    except Exception:  # noqa: BLE001 - untrusted schema: no invalid instances, the valid one still counts
        invalid = []
    return (
        Instance("the oracle's valid instance", valid.instance, True, VALID_GROUP),
        *(Instance(f"violates {bad.keyword} at {bad.schema_path}", bad.instance, False, bad.keyword)
          for bad in invalid),
    )


def _shipped_suites() -> dict[str, Path]:
    try:
        root = shipped_data("suites")
    except UsageError:
        return {}
    return {p.stem if p.is_file() else p.name: p for p in sorted(root.iterdir())
            if p.is_dir() or p.suffix == ".jsonl"}


def known_suites() -> list[str]:
    return [JSON_SCHEMA_TEST_SUITE, GENERATED, *_shipped_suites()]


def suite_sources(name: str, drafts: tuple[str, ...], n: int, limit: int | None) -> list[CheckSource]:
    """The sources of one ``--suite NAME``; UsageError with a did-you-mean
    for a name that is neither built in nor shipped under data/suites/."""
    if name == JSON_SCHEMA_TEST_SUITE:
        return [official_suite_source(draft, limit) for draft in drafts]
    if name == GENERATED:
        return [generated_source(n, limit=limit)]
    shipped = _shipped_suites()
    if name not in shipped:
        hint = did_you_mean(name, known_suites())
        raise UsageError(f"unknown suite {name!r}{hint}; known: {', '.join(known_suites())}")
    return [schemas_source(shipped[name], name, limit)]
