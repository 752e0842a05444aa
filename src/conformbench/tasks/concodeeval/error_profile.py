"""What a model got wrong zero-shot: the error profile that picks few-shot
examples (``--shots-from REPLAY``).

The paper chose its shots from the zero-shot errors: "we identify errors
from the zero-shot setting, then select shots similar to the most frequent
errors". A profile is read from a zero-shot run's replay: the task is
rebuilt from the replay header's spec (as scoring does), every zero-shot
generation of it is scored, and each wrong one is tallied by the keywords it
got wrong, the root type and the length of its schema.

Only generations without a grammar count (prompt-only and unconstrained
arms): a shot can teach a prompt, while the failures of a constrained arm
are what its engine does not enforce. Generations that errored or were
excluded are not outcomes and are skipped.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from conformbench.arms.base import arms
from conformbench.errors import UsageError
from conformbench.files import read_bytes_file
from conformbench.jsontypes import JSONValue
from conformbench.records.items import Condition, Item, ItemScore
from conformbench.records.replay_file import ReplayContents, read_replay

__all__ = [
    "ErrorProfile",
    "ErrorReader",
    "SchemaErrors",
    "canonical",
    "read_profile",
    "root_name",
    "same_schema",
    "schema_size",
]


@runtime_checkable
class ErrorReader(Protocol):
    """A task that can say what a scored generation got wrong."""

    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore: ...

    def error_keywords(self, item: Item, score: ItemScore) -> tuple[str, ...] | None:
        """None: no error; else the keywords it got wrong (may be empty)."""
        ...


def root_name(schema: JSONValue) -> str:
    """The root type a schema asks for: 'array', 'object'..., several joined
    by '|', 'any' where it names none."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list) and kind:
        return "|".join(str(k) for k in kind)
    return "any"


def schema_size(schema: JSONValue) -> int:
    """Length of the schema's JSON text (the paper's 'short schema')."""
    return len(json.dumps(schema, ensure_ascii=False))


def canonical(schema: JSONValue) -> str:
    """The schema as JSON text with sorted keys (for comparing content)."""
    return json.dumps(schema, sort_keys=True)


def same_schema(a: JSONValue, b: JSONValue) -> bool:
    """Equal as JSON documents (key order aside)."""
    return canonical(a) == canonical(b)


def _ranked(counts: Counter[str]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass(frozen=True)
class SchemaErrors:
    """The zero-shot outcome of one schema over all its items and conditions."""

    schema_id: str
    schema: JSONValue
    generations: int
    failures: int
    #: (keyword, failing generations that got it wrong), most frequent first
    keywords: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class ErrorProfile:
    """Failures of one task in a zero-shot replay."""

    source: str
    sha256: str
    task: str
    #: zero-shot generations read (without a grammar)
    generations: int
    #: of which wrong
    failures: int
    #: (keyword, failing generations that got it wrong), most frequent first
    keywords: tuple[tuple[str, int], ...]
    #: (root type of the schema, failing generations), most frequent first
    root_types: tuple[tuple[str, int], ...]
    #: median JSON length of the schemas of failing generations (None: none failed)
    median_size: int | None
    schemas: dict[str, SchemaErrors] = field(default_factory=dict)

    @property
    def dominant_root(self) -> str | None:
        return self.root_types[0][0] if self.root_types else None

    def top_keywords(self, limit: int) -> tuple[tuple[str, int], ...]:
        return self.keywords[:limit]

    def errors_of(self, schema_id: str, schema: JSONValue) -> SchemaErrors | None:
        """The schema's own zero-shot outcome, when the replay ran this very
        schema (same id and same content)."""
        found = self.schemas.get(schema_id)
        if found is None or not same_schema(found.schema, schema):
            return None
        return found

    def summary(self) -> dict[str, JSONValue]:
        return {
            "source": self.source,
            "sha256": self.sha256,
            "generations": self.generations,
            "failures": self.failures,
            "keywords": {k: n for k, n in self.keywords},
            "root_types": {k: n for k, n in self.root_types},
            "median_size": self.median_size,
        }


@dataclass
class _Tally:
    schema_id: str
    schema: JSONValue
    generations: int = 0
    failures: int = 0
    keywords: Counter[str] = field(default_factory=Counter)

    def frozen(self) -> SchemaErrors:
        return SchemaErrors(self.schema_id, self.schema, self.generations, self.failures,
                            _ranked(self.keywords))


def _reader(contents: ReplayContents, task_name: str) -> ErrorReader:
    from conformbench.tasks.base import tasks

    spec = contents.header.spec  # checked when the replay was read
    names = [t.name for t in spec.tasks]
    if task_name not in names:
        raise UsageError(f"{contents.path}: the replay has no {task_name!r} task "
                         f"(it ran: {', '.join(names)})")
    # formats asserted, whatever the scoring mode: the errors pick the few-shot
    # examples, which are part of the items, and items must not depend on how a
    # run is scored (a resumed run compares them); a broken format is an error
    # worth a shot either way
    options = replace(spec.task_spec(task_name).options(), format_assertion=True)
    task = tasks.get(task_name)(options)
    if not isinstance(task, ErrorReader):
        raise UsageError(f"task {task_name!r} cannot say what a generation got wrong")
    return task


def _counted(rec_task: str, task_name: str, cond: Condition, finish: str) -> bool:
    return (rec_task == task_name and cond.count_axis("shots") == 0 and finish not in ("error", "excluded")
            and not arms.get(cond.arm).constrained)


def read_profile(path: Path, task_name: str) -> ErrorProfile:
    """The error profile of ``task_name`` in the replay at ``path``;
    UsageError when it holds no zero-shot generation of that task."""
    contents = read_replay(path)
    reader = _reader(contents, task_name)
    items = {rec.item.id: rec.item for rec in contents.items if rec.task == task_name}
    tallies: dict[str, _Tally] = {}
    keywords: Counter[str] = Counter()
    roots: Counter[str] = Counter()
    sizes: list[int] = []
    total = 0
    for gen in contents.generations:
        if not _counted(gen.task, task_name, gen.condition, gen.finish_reason):
            continue
        item = items.get(gen.item_id)
        if item is None:
            raise UsageError(f"{path}: no item record for {task_name}/{gen.item_id}")
        schema = item.input.get("schema")
        sid = str(item.input.get("schema_id", item.id))
        tally = tallies.setdefault(sid, _Tally(sid, schema))
        score = reader.score(item, gen.condition, gen.answer, gen.finish_reason == "length")
        wrong = reader.error_keywords(item, score)
        total += 1
        tally.generations += 1
        if wrong is None:
            continue
        tally.failures += 1
        tally.keywords.update(set(wrong))
        keywords.update(set(wrong))
        roots[root_name(schema)] += 1
        sizes.append(schema_size(schema))
    if total == 0:
        raise UsageError(f"{path}: no zero-shot {task_name} generation without a grammar to "
                         "learn errors from (--shots-from wants a zero-shot run's replay)")
    return ErrorProfile(
        source=str(path),
        sha256=hashlib.sha256(read_bytes_file(path, "replay file")).hexdigest(),
        task=task_name,
        generations=total,
        failures=len(sizes),
        keywords=_ranked(keywords),
        root_types=_ranked(roots),
        median_size=int(statistics.median(sizes)) if sizes else None,
        schemas={sid: t.frozen() for sid, t in tallies.items()},
    )
