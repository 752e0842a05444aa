"""DIR/engines-check.json, .md and .html from an EngineCheckReport. Both
pages are built from the same tables: the summary (coverage, compliance,
over/under, costs; comparable with JSONSchemaBench's per-engine numbers),
one keyword matrix per source, then every refusal and every wrong case."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path

from conformbench.audits.engine_check.records import EngineCheckReport, EngineResult, GroupResult, SourceResult
from conformbench.audits.engine_check.sources import VALID_GROUP
from conformbench.audits.keyword_classes import STATUS_MEANINGS
from conformbench.errors import UsageError
from conformbench.files import JSON_SCHEMA_TEST_SUITE, write_files
from conformbench.records.markdown_escape import md_text
from conformbench.reports.html import _CSS, _table
from conformbench.scoring.percent import pct

__all__ = ["render_engine_check_html", "render_engine_check_markdown", "write_engine_check"]

_REASON_CHARS = 240


@dataclass(frozen=True)
class _Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    #: long listings fold away in HTML
    folded: bool = False


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 1 else f"{value:,.1f}"


def _summary(report: EngineCheckReport) -> _Table:
    header = ["engine", "version", "source", "schemas", "compiled (coverage)", "refused (timed out)",
              "documents judged", "compliance", "over", "under", "compile p50 / p95 ms",
              "mask p50 / p99 ms (n)", "seconds"]
    rows = []
    for engine in report.engines:
        if not engine.available:
            rows.append([engine.engine, "-", f"unavailable: {engine.reason}", *["-"] * 10])
        for s in engine.sources:
            coverage = "-" if s.coverage is None else pct(s.coverage)
            compliance = "-" if s.compliance is None else pct(s.compliance)
            rows.append([
                engine.engine, engine.version or "-", s.source, str(s.schemas), f"{s.compiled} ({coverage})",
                f"{s.refused} ({s.timed_out})", str(s.valid + s.invalid), compliance,
                f"{s.over}/{s.valid}", f"{s.under}/{s.invalid}",
                f"{_ms(s.compile.p50_ms)} / {_ms(s.compile.p95_ms)}",
                f"{_ms(s.mask.p50_ms)} / {_ms(s.mask.p99_ms)} ({s.mask.n})", f"{s.seconds:.1f}",
            ])
    return _Table("Summary", header, rows)


def _jsonschemabench(report: EngineCheckReport) -> _Table:
    """The same counts in JSONSchemaBench's and MaskBench's terms, per schema."""
    header = ["engine", "source", "declared coverage (compiles)", "empirical coverage (every document right)",
              "compliance (empirical / declared)", "validation errors (= over)", "invalidation errors (= under)"]
    rows = []
    for engine in report.engines:
        for s in engine.sources:
            def share(value: float | None) -> str:
                return "-" if value is None else pct(value)

            rows.append([engine.engine, s.source, f"{s.compiled}/{s.schemas} ({share(s.coverage)})",
                         f"{s.right}/{s.schemas} ({share(s.empirical_coverage)})", share(s.schema_compliance),
                         str(s.over), str(s.under)])
    return _Table("In JSONSchemaBench's terms", header, rows)


def _cell(group: GroupResult | None) -> str:
    if group is None:
        return "-"
    if group.group == VALID_GROUP:  # no violations are tried here: only over-constraint says anything
        return f"over {group.over}/{group.valid}" if group.valid else "-"
    text: str = group.status
    if 0 < group.refused < group.schemas:
        text += f" (refused {group.refused}/{group.schemas})"
    if group.under:
        text += f", under {group.under}/{group.invalid}"
    if group.over:
        text += f", over {group.over}/{group.valid}"
    return text


def _short(source: str) -> str:
    return source.replace(f"{JSON_SCHEMA_TEST_SUITE}/", "suite ")


def _matrix(engine: EngineResult) -> _Table:
    """One engine's keywords: a column per schema set, and the probe's
    verdict (generating with a model) where one was attached."""
    by_source = {s.source: {g.group: g for g in s.groups} for s in engine.sources}
    groups: list[str] = []
    for source in engine.sources:
        groups += [g.group for g in source.groups if g.group not in groups]
    groups += [k for k in engine.probe if k not in groups]
    header = ["keyword", *(_short(s.source) for s in engine.sources)]
    if engine.probe:
        header.append("probe (model)")
    rows = []
    for group in groups:
        row = [group, *(_cell(by_source[s.source].get(group)) for s in engine.sources)]
        if engine.probe:
            row.append(engine.probe.get(group, "-"))
        rows.append(row)
    return _Table(f"Keywords: {engine.engine}", header, rows)


def _matrices(report: EngineCheckReport) -> list[_Table]:
    return [_matrix(e) for e in report.engines if e.available and (e.sources or e.probe)]


def _refusals(engine: EngineResult, source: SourceResult) -> _Table:
    rows = [[r.schema_id, r.group, "yes" if r.timed_out else "", r.reason[:_REASON_CHARS]] for r in source.refusals]
    title = f"Refused by {engine.engine} on {source.source} ({len(rows)})"
    return _Table(title, ["schema", "group", "timed out", "reason"], rows, folded=True)


def _cases(engine: EngineResult, source: SourceResult) -> _Table:
    rows = [[c.verdict, c.schema_id, c.group, c.description, c.document, c.detail] for c in source.cases]
    title = f"Wrong verdicts of {engine.engine} on {source.source} ({len(rows)})"
    return _Table(title, ["verdict", "schema", "group", "test", "document as fed", "where"], rows, folded=True)


def _listings(report: EngineCheckReport) -> list[_Table]:
    tables = []
    for engine in report.engines:
        for source in engine.sources:
            tables += [_cases(engine, source), _refusals(engine, source)]
    return tables


def _intro(report: EngineCheckReport) -> list[str]:
    s = report.settings
    limit = "none" if s.compile_timeout_s is None else f"{s.compile_timeout_s:g} s"
    return [
        f"Tokenizer: {report.tokenizer.model_file} ({report.tokenizer.n_vocab} tokens), vocabulary only "
        f"(no model weights). Documents serialised as {', '.join(s.serialisations)} JSON and walked token by "
        f"token through each engine's matcher; the full next-token mask timed at up to {s.mask_positions} "
        f"positions per schema. Compile limit (where an engine can stop a compile: outlines' index build): "
        f"{limit}. Created {report.created}; {report.seconds:.1f} s in all.",
        "over: valid documents the grammar rejects (over-constrained); under: invalid documents it accepts "
        "(under-constrained); both over the documents of compiled schemas. compliance = documents judged "
        "right / documents judged. Refused schemas count against coverage only; their documents are not judged. "
        f"The '{VALID_GROUP}' group holds the oracle's valid instance of each generated or real schema "
        "(or a MaskBench suite's valid tests).",
        "JSONSchemaBench's terms, per schema: declared coverage = schemas compiled / schemas; empirical "
        "coverage = schemas compiled whose every document was judged right / schemas; compliance = empirical "
        "/ declared. MaskBench's validation error = a valid document rejected (over), invalidation error = an "
        "invalid document accepted (under).",
        *(f"Left out of this default check: {name}, because {why}; name it with --engine to add it."
          for name, why in s.left_out.items()),
        *([f"Probe column: `conformbench engines probe` results from {report.probe_source}."]
          if report.probe_source else []),
        *_resumed(report),
    ]


def _resumed(report: EngineCheckReport) -> list[str]:
    kept = [f"{e.engine} {e.resumed}" for e in report.engines if e.resumed]
    if not kept:
        return []
    return [f"Resumed: schema outcomes (timings included) read from an earlier, interrupted check in the same "
            f"directory and settings: {', '.join(kept)}; the total time above counts this session only."]


def _legend() -> list[str]:
    return [f"{status}: {meaning}" for status, meaning in STATUS_MEANINGS.items() if status != "unavailable"]


def _md_table(table: _Table) -> list[str]:
    # every field (schema ids, descriptions, documents, engine and source
    # names) is user data: literal text through report.md's own escaping
    out = [f"## {md_text(table.title)}", ""]
    if not table.rows:
        return [*out, "None.", ""]
    out += ["| " + " | ".join(md_text(h) for h in table.header) + " |", "|" + "---|" * len(table.header)]
    out += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in table.rows]
    return [*out, ""]


def render_engine_check_markdown(report: EngineCheckReport) -> str:
    lines = ["# Constraint engines checked without a model", "", *(md_text(p) for p in _intro(report)), ""]
    lines += _md_table(_summary(report))
    lines += _md_table(_jsonschemabench(report))
    for table in _matrices(report):
        lines += _md_table(table)
    lines += [md_text("Keyword status: " + "; ".join(_legend()) + "."), ""]
    for table in _listings(report):
        lines += _md_table(table)
    return "\n".join(lines)


def _html_table(table: _Table) -> str:
    body = _table([escape(h) for h in table.header], [[escape(c) for c in row] for row in table.rows]) \
        if table.rows else "<p>None.</p>"
    if table.folded:
        return f"<details><summary>{escape(table.title)}</summary>{body}</details>"
    return f"<h2>{escape(table.title)}</h2>{body}"


def render_engine_check_html(report: EngineCheckReport) -> str:
    """A self-contained page (inline CSS, no scripts) with report.html's style."""
    parts = [f"<p>{escape(p)}</p>" for p in _intro(report)]
    parts.append(_html_table(_summary(report)))
    parts.append(_html_table(_jsonschemabench(report)))
    parts += [_html_table(t) for t in _matrices(report)]
    parts.append("<ul>" + "".join(f"<li>{escape(line)}</li>" for line in _legend()) + "</ul>")
    parts.append("<h2>Every refusal and every wrong verdict</h2>")
    parts += [_html_table(t) for t in _listings(report)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>conformbench engine check</title><style>{_CSS}</style></head><body>"
            "<h1>Constraint engines checked without a model</h1>" + "".join(parts) + "</body></html>\n")


def write_engine_check(report: EngineCheckReport, out_dir: Path) -> list[Path]:
    """Write DIR/engines-check.json, .md and .html; returns the paths."""
    files = {
        "engines-check.json": report.model_dump_json(indent=2) + "\n",
        "engines-check.md": render_engine_check_markdown(report),
        "engines-check.html": render_engine_check_html(report),
    }
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write the engine check to {out_dir}: {exc.strerror or exc}") from None
    write_files({out_dir / name: text for name, text in files.items()})
    return [out_dir / name for name in files]
