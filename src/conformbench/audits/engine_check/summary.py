"""Per-schema outcomes of one engine on one source, summed into a
SourceResult: counts, keyword groups, timings and every wrong case."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

from conformbench.audits.engine_check.prepare import Document
from conformbench.audits.engine_check.records import CaseResult, GroupResult, Refusal, SourceResult, Timing
from conformbench.audits.engine_check.sources import CheckSchema, CheckSource, Instance
from conformbench.audits.keyword_classes import keyword_status
from conformbench.percentiles import percentile

__all__ = ["Judged", "SchemaOutcome", "summarise", "timing"]

_DOCUMENT_CHARS = 300


@dataclass(frozen=True)
class Judged:
    instance: Instance
    verdict: Literal["ok", "over", "under"]
    #: the serialisation that was judged wrongly
    document: Document | None
    detail: str


@dataclass(frozen=True)
class SchemaOutcome:
    schema: CheckSchema
    refusal: Refusal | None
    compile_seconds: float
    judged: list[Judged]
    mask_seconds: list[float]


def timing(seconds: list[float]) -> Timing:
    def ms(q: float) -> float | None:
        value = percentile(seconds, q)
        return None if value is None else round(value * 1000, 4)

    return Timing(n=len(seconds), p50_ms=ms(50), p95_ms=ms(95), p99_ms=ms(99))


def _groups_of(schema: CheckSchema) -> set[str]:
    return {i.group for i in schema.instances} or {schema.group}


def _groups(outcomes: list[SchemaOutcome]) -> list[GroupResult]:
    order: list[str] = []
    schemas: dict[str, int] = defaultdict(int)
    refused: dict[str, int] = defaultdict(int)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for outcome in outcomes:
        for group in sorted(_groups_of(outcome.schema)):
            if group not in schemas:
                order.append(group)
            schemas[group] += 1
            refused[group] += outcome.refusal is not None
        for judged in outcome.judged:
            group = judged.instance.group
            counts[group, "valid" if judged.instance.valid else "invalid"] += 1
            counts[group, judged.verdict] += 1
    return [
        GroupResult(
            group=g, schemas=schemas[g], refused=refused[g], valid=counts[g, "valid"],
            invalid=counts[g, "invalid"], over=counts[g, "over"], under=counts[g, "under"],
            status=keyword_status(compiled=schemas[g] - refused[g], refused=refused[g],
                                  violations_tried=counts[g, "invalid"], let_through=counts[g, "under"]),
        )
        for g in order
    ]


def _case(schema: CheckSchema, judged: Judged) -> CaseResult:
    document = judged.document
    assert document is not None and judged.verdict != "ok"
    text = document.text if len(document.text) <= _DOCUMENT_CHARS else document.text[:_DOCUMENT_CHARS] + "…"
    return CaseResult(
        schema_id=schema.id, group=judged.instance.group, description=judged.instance.description,
        verdict=judged.verdict, serialisation=document.serialisation, document=text,
        tokens=len(document.tokens), detail=judged.detail,
    )


def summarise(source: CheckSource, outcomes: list[SchemaOutcome], seconds: float) -> SourceResult:
    refusals = [o.refusal for o in outcomes if o.refusal is not None]
    compiled = [o for o in outcomes if o.refusal is None]
    judged = [(o.schema, j) for o in compiled for j in o.judged]
    return SourceResult(
        source=source.name,
        draft=source.draft,
        schemas=len(outcomes),
        compiled=len(compiled),
        refused=len(refusals),
        timed_out=sum(r.timed_out for r in refusals),
        valid=sum(j.instance.valid for _, j in judged),
        invalid=sum(not j.instance.valid for _, j in judged),
        over=sum(j.verdict == "over" for _, j in judged),
        under=sum(j.verdict == "under" for _, j in judged),
        unjudged=sum(len(o.schema.instances) for o in outcomes if o.refusal is not None),
        without_documents=sum(not o.schema.instances for o in outcomes),
        compile=timing([o.compile_seconds for o in compiled]),
        mask=timing([s for o in compiled for s in o.mask_seconds]),
        seconds=round(seconds, 3),
        groups=_groups(outcomes),
        refusals=refusals,
        cases=[_case(schema, j) for schema, j in judged if j.verdict != "ok"],
        right=sum(bool(o.judged) and all(j.verdict == "ok" for j in o.judged) for o in compiled),
    )
