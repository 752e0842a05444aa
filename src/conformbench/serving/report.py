"""report.json of ``engines cost``, computed from the journal's rows: per
concurrency level and arm the throughput, TTFT and TPOT percentiles and the
validity of the answers (the scorer's parser and validator, against each
prompt's full schema); per level and grammar-on arm the ratios to the
grammar-off arm, each with its spread over the repeats, and the validity
paired per prompt.

TTFT is the time from sending a request to its first text; TPOT the time
from the first text to the last over the output tokens after the first
(the server's ``usage.completion_tokens`` where it sends it, else the
events that carried text). Requests that failed count in ``errors`` and in
no latency or validity."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from conformbench.records.base import FrozenRecord
from conformbench.records.results import Rate
from conformbench.schemas.case import ExcludedSchema
from conformbench.scoring.intervals import wilson
from conformbench.serving.dropped import ArmDrops, dropped_keywords
from conformbench.serving.journal import BatchKey, CostJournal
from conformbench.serving.journal_rows import ANSWER_FINISHES
from conformbench.serving.stats import percentile, ratio, spread
from conformbench.serving.workload import CostPrompt
from conformbench.tasks.extract import parse_json_output
from conformbench.validator.schema_validator import validator_for

__all__ = ["MIN_ANSWERS", "ArmStats", "Comparison", "CostReport", "Latency", "Pairs", "RatioSpread", "build_report",
           "request_measures", "trusted_count"]

_QUANTILES = (50, 90, 99)
#: the fewest answers an arm of a repeat needs for its ratio: one answer's median is an anecdote
MIN_ANSWERS = 2


class Latency(FrozenRecord):
    """Milliseconds."""

    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None


class ArmStats(FrozenRecord):
    concurrency: int
    arm: str
    grammar: bool
    #: the grammar cache state the numbers are of ("none" with the grammar off)
    cache: Literal["none", "warm", "cold"]
    n: int
    errors: int
    requests_per_s: float | None
    output_tokens_per_s: float | None
    ttft: Latency
    tpot: Latency
    validity: Rate
    #: where the output token counts came from: usage, chunks, or both (mixed)
    tokens_from: str
    output_tokens: int
    #: answers whose server-claimed token count was not believable (over the cap, or more tokens than
    #: bytes and events): their events were counted instead
    usage_distrusted: int = 0


class RatioSpread(FrozenRecord):
    """On over off, one value per repeat: their median and range."""

    median: float | None
    low: float | None
    high: float | None
    per_repeat: list[float]
    #: repeats left out of the ratio: an arm of theirs had fewer than ``MIN_ANSWERS`` answers
    thin_repeats: int = 0


class Pairs(FrozenRecord):
    """The same prompt (repeat, level) with the grammar off and on, both answered."""

    both_valid: int
    only_on_valid: int
    only_off_valid: int
    neither: int


class Comparison(FrozenRecord):
    concurrency: int
    arm: str
    cache: str
    throughput_ratio: RatioSpread
    tok_s_ratio: RatioSpread
    ttft_ratio: RatioSpread
    tpot_ratio: RatioSpread
    validity_on: Rate
    validity_off: Rate
    pairs: Pairs


class CostReport(FrozenRecord):
    settings: dict[str, Any]
    server: dict[str, Any]
    arms: list[ArmStats]
    comparisons: list[Comparison]
    complete: bool
    #: per grammar-on arm, the schema keywords its parsed answers broke (serving/dropped.py)
    dropped: list[ArmDrops] = Field(default_factory=list)
    #: the corpus's schemas left out before measuring, each with why
    excluded: list[ExcludedSchema] = Field(default_factory=list)
    #: requests of the finished batches that gave no answer (errors, cut streams, filtered), and the first's why
    lost: int = 0
    lost_example: str | None = None


def _rate(k: int, n: int) -> Rate:
    return Rate(k=k, n=n, rate=k / n if n else 0.0, ci95=wilson(k, n))


def trusted_count(counted: object, chunks: int, text: str, max_tokens: int | None) -> int | None:
    """The server's ``completion_tokens`` where it is believable: at most
    the request's token cap, and at most one token per byte of the text or
    per event that carried text (whichever is more: a token is at least a
    byte, or its own event), and the end token; None otherwise (the events
    are counted)."""
    if not isinstance(counted, int) or isinstance(counted, bool) or counted < 0:
        return None
    if max_tokens is not None and counted > max_tokens:
        return None
    return counted if counted <= max(chunks, len(text.encode("utf-8", errors="replace"))) + 1 else None


def request_measures(row: dict[str, Any], schema: dict[str, Any], max_tokens: int | None = None) -> dict[str, Any]:
    """One request's tokens, TTFT, TPOT (seconds), validity and the schema
    keywords its answer breaks (None where it did not parse as JSON); all
    None for a failed one (an error, or a finish that is no answer:
    ``content_filter``). ``from`` says where the token count came from:
    ``usage`` (the server's), ``chunks`` (the events with text), or
    ``distrusted`` (events: the server's count was not believable)."""
    finish = row.get("finish_reason")
    if row.get("error") or (finish is not None and finish not in ANSWER_FINISHES):
        return {"tokens": None, "ttft": None, "tpot": None, "valid": None, "from": None, "violated": None}
    usage = row.get("usage") or {}
    claimed = usage.get("completion_tokens")
    counted = trusted_count(claimed, int(row["chunks"]), str(row.get("text", "")), max_tokens)
    tokens = counted if counted is not None else int(row["chunks"])
    first, last = row.get("first_s"), row.get("last_s")
    tpot = (last - first) / (tokens - 1) if tokens > 1 and first is not None and last is not None else None
    parsed = parse_json_output(str(row.get("text", "")), schema)
    violated = sorted({v.keyword for v in validator_for(schema, formats="annotate").violations(parsed.value)}) \
        if parsed.ok else None
    source = "usage" if counted is not None else "chunks" if claimed is None else "distrusted"
    return {"tokens": tokens, "ttft": first, "tpot": tpot, "valid": parsed.ok and not violated,
            "from": source, "violated": violated}


def _latency(values: list[float]) -> Latency:
    ms = [v * 1000 for v in values]
    p50, p90, p99 = (percentile(ms, q) for q in _QUANTILES)
    return Latency(p50_ms=p50, p90_ms=p90, p99_ms=p99)


Measured = dict[BatchKey, list[dict[str, Any]]]


def _arm_stats(journal: CostJournal, measured: Measured, keys: list[BatchKey]) -> ArmStats:
    rows = [m for key in keys for m in measured[key]]
    ok = [m for m in rows if m["tokens"] is not None]
    wall = sum(float(journal.batches[key]["wall_s"]) for key in keys)
    tokens = sum(int(m["tokens"]) for m in ok)
    sources = {m["from"] for m in ok}
    _r, level, arm = keys[0]
    return ArmStats(
        concurrency=level, arm=arm, grammar=arm != "off",
        cache="none" if arm == "off" else "warm" if arm == "warm" else "cold",
        n=len(rows), errors=len(rows) - len(ok),
        requests_per_s=len(ok) / wall if wall > 0 else None,
        output_tokens_per_s=tokens / wall if wall > 0 else None,
        ttft=_latency([m["ttft"] for m in ok if m["ttft"] is not None]),
        tpot=_latency([m["tpot"] for m in ok if m["tpot"] is not None]),
        validity=_rate(sum(bool(m["valid"]) for m in ok), len(ok)),
        tokens_from="mixed" if len(sources) > 1 else next(iter(sources), "none"), output_tokens=tokens,
        usage_distrusted=sum(1 for m in ok if m["from"] == "distrusted"),
    )


def _per_repeat(journal: CostJournal, measured: Measured, key: BatchKey, what: str) -> float | None:
    ok = [m for m in measured[key] if m["tokens"] is not None]
    wall = float(journal.batches[key]["wall_s"])
    if what == "req_s":
        return len(ok) / wall if wall > 0 else None
    if what == "tok_s":
        return sum(int(m["tokens"]) for m in ok) / wall if wall > 0 else None
    return percentile([m[what] for m in ok if m[what] is not None], 50)


def _ratio_spread(journal: CostJournal, measured: Measured, pairs: list[tuple[BatchKey, BatchKey]],
                  what: str) -> RatioSpread:
    values = [ratio(_per_repeat(journal, measured, on, what), _per_repeat(journal, measured, off, what))
              for on, off in pairs if _answered(measured, on) >= MIN_ANSWERS <= _answered(measured, off)]
    s = spread(values)
    return RatioSpread(median=s.median, low=s.low, high=s.high, per_repeat=list(s.values),
                       thin_repeats=len(pairs) - len(values))


def _answered(measured: Measured, key: BatchKey) -> int:
    return sum(1 for m in measured[key] if m["tokens"] is not None)


def _pairs(measured: Measured, pairs: list[tuple[BatchKey, BatchKey]]) -> Pairs:
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for on_key, off_key in pairs:
        off = {m["index"]: m["valid"] for m in measured[off_key] if m["valid"] is not None}
        for m in measured[on_key]:
            if m["valid"] is not None and m["index"] in off:
                counts[(bool(m["valid"]), bool(off[m["index"]]))] += 1
    return Pairs(both_valid=counts[(True, True)], only_on_valid=counts[(True, False)],
                 only_off_valid=counts[(False, True)], neither=counts[(False, False)])


def _measured(journal: CostJournal, prompts: list[CostPrompt]) -> Measured:
    out: Measured = {}
    cap = journal.header.get("max_tokens")
    for key in journal.batches:
        out[key] = [{"index": r["index"], **request_measures(r, prompts[int(r["index"])].schema, cap)}
                    for r in journal.requests.get(key, [])]
    return out


def _lost(journal: CostJournal, measured: Measured, done: list[BatchKey]) -> tuple[int, str | None]:
    """How many requests of ``done`` gave no answer, and the first one's why."""
    lost = [(key, i) for key in done for i, m in enumerate(measured[key]) if m["tokens"] is None]
    if not lost:
        return 0, None
    key, i = lost[0]
    row = journal.requests[key][i]
    why = row.get("error") or f"finish_reason {row.get('finish_reason')!r}"
    return len(lost), f"concurrency {key[1]}, {key[2]}: {str(why)[:200]}"


def build_report(journal: CostJournal, prompts: list[CostPrompt], plan: Iterable[BatchKey],
                 server: dict[str, Any], excluded: tuple[ExcludedSchema, ...] = ()) -> CostReport:
    """The report of the finished batches of ``plan``."""
    measured = _measured(journal, prompts)
    done: list[BatchKey] = []
    planned = 0
    for key in plan:
        planned += 1
        if key in measured:
            done.append(key)
    groups: dict[tuple[int, str], list[BatchKey]] = {}
    for key in done:
        groups.setdefault((key[1], key[2]), []).append(key)
    stats = {group: _arm_stats(journal, measured, keys) for group, keys in groups.items()}
    comparisons = []
    for (level, arm), keys in groups.items():
        if arm == "off" or (level, "off") not in groups:
            continue
        off_by_repeat = {k[0]: k for k in groups[(level, "off")]}
        pairs = [(k, off_by_repeat[k[0]]) for k in keys if k[0] in off_by_repeat]
        comparisons.append(Comparison(
            concurrency=level, arm=arm, cache=arm,
            throughput_ratio=_ratio_spread(journal, measured, pairs, "req_s"),
            tok_s_ratio=_ratio_spread(journal, measured, pairs, "tok_s"),
            ttft_ratio=_ratio_spread(journal, measured, pairs, "ttft"),
            tpot_ratio=_ratio_spread(journal, measured, pairs, "tpot"),
            validity_on=stats[(level, arm)].validity, validity_off=stats[(level, "off")].validity,
            pairs=_pairs(measured, pairs)))
    settings = {k: v for k, v in journal.header.items() if k != "format"}
    lost, example = _lost(journal, measured, done)
    return CostReport(settings=settings, server=server, arms=list(stats.values()), comparisons=comparisons,
                      complete=len(done) == planned, dropped=dropped_keywords(measured, prompts, done),
                      excluded=list(excluded), lost=lost, lost_example=example)
