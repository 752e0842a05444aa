"""Dataset statistics: the keyword mix (schemas per keyword, per root type,
per depth) and schema lengths in tokens per format (the paper's Table 5)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import Field

from conformbench.formats.positions import Tokenizer
from conformbench.records.base import FrozenRecord
from conformbench.schemas.case import SchemaCase
from conformbench.schemas.walk import keywords_of

__all__ = ["DatasetStats", "TokenStats", "dataset_stats", "token_stats", "token_table_markdown"]


class DatasetStats(FrozenRecord):
    n: int
    #: schemas in which each keyword occurs (anywhere)
    keywords: dict[str, int]
    root_types: dict[str, int]
    depths: dict[str, int]
    #: single-keyword invalid instances per keyword
    invalid_instances: dict[str, int]
    unisolated: int = 0
    excluded: int = 0
    #: schemas without a rendering in each schema format (formats that can
    #: express every schema are not listed)
    missing_formats: dict[str, int] = Field(default_factory=dict)
    #: keyword occurrences the python (Pydantic) rendering states inexactly,
    #: per keyword, and the schemas with any
    python_inexact: dict[str, int] = Field(default_factory=dict)
    python_inexact_schemas: int = 0

    def to_json(self) -> dict[str, object]:
        """The stats.json body; ``missing_formats`` and the python_inexact
        counts only when not empty, so datasets without them keep their old
        stats file."""
        drop = set() if self.missing_formats else {"missing_formats"}
        if not self.python_inexact:
            drop |= {"python_inexact", "python_inexact_schemas"}
        return self.model_dump(mode="json", exclude=drop or None)


class TokenStats(FrozenRecord):
    """How long one schema format's renderings are, in tokens: of a
    dataset's cases (``token_stats``) or of a scored table's distinct
    schemas (ConCodeEval's Table 5, ``scoring.concodeeval.metrics``)."""

    schema_format: str
    #: the renderings counted
    schemas: int
    max_tokens: int
    mean_tokens: float


def _sorted(counter: Counter[str]) -> dict[str, int]:
    """Most frequent first, ties by name: stable output."""
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def dataset_stats(cases: Sequence[SchemaCase], excluded: int = 0) -> DatasetStats:
    keywords: Counter[str] = Counter()
    roots: Counter[str] = Counter()
    depths: Counter[str] = Counter()
    invalid: Counter[str] = Counter()
    missing: Counter[str] = Counter()
    inexact: Counter[str] = Counter()
    for case in cases:
        missing.update(case.missing_formats.keys())
        inexact.update(i.keyword for i in case.python_inexact)
        keywords.update(keywords_of(case.schema))
        roots[case.root_type or "any"] += 1
        depths[str(case.depth)] += 1
        invalid.update(i.keyword for i in case.invalid_instances)
    return DatasetStats(
        n=len(cases),
        keywords=_sorted(keywords),
        root_types=_sorted(roots),
        depths=dict(sorted(depths.items(), key=lambda kv: int(kv[0]))),
        invalid_instances=_sorted(invalid),
        unisolated=sum(len(c.unisolated) for c in cases),
        excluded=excluded,
        missing_formats=_sorted(missing),
        python_inexact=_sorted(inexact),
        python_inexact_schemas=sum(bool(c.python_inexact) for c in cases),
    )


def token_stats(cases: Sequence[SchemaCase], tokenize: Tokenizer) -> list[TokenStats]:
    """Max and mean rendering length per schema format."""
    lengths: dict[str, list[int]] = {}
    for case in cases:
        for fmt, text in case.renderings.items():
            lengths.setdefault(fmt, []).append(len(tokenize(text)))
    return [
        TokenStats(schema_format=fmt, schemas=len(v), max_tokens=max(v), mean_tokens=round(sum(v) / len(v), 2))
        for fmt, v in lengths.items()
        if v
    ]


def token_table_markdown(rows: Sequence[TokenStats]) -> str:
    """The token table as Markdown, with the numbers ``dataset stats
    --tokens`` prints (docs/dataset.md holds this text for the default
    dataset, and a test checks it against the code)."""
    lines = ["| format | max tokens | mean tokens |", "|---|---|---|"]
    lines += [f"| {r.schema_format} | {r.max_tokens} | {r.mean_tokens:.2f} |" for r in rows]
    return "\n".join(lines)
