"""report.md, rendered from a ScoredRun alone."""

from __future__ import annotations

import json
from typing import Any

from conformbench.records.markdown_escape import md_text
from conformbench.records.results import LedgerRow, ScoredRun, SectionResult, TaskModelResult
from conformbench.reports.text import (
    ARM_INTERVALS,
    comparison_lines,
    comparisons_heading,
    cut_mark,
    cut_text,
    facts,
    format_mode_text,
    n_line,
    rate_text,
    role_text,
    samples_text,
    share_text,
    source_line,
)
from conformbench.reports.verdict import verdict_markdown
from conformbench.scoring.sections import run_sections, sections

__all__ = ["render_markdown", "section_markdown"]


def _cell(text: str) -> str:
    # cells hold item ids and labels: literal text, never HTML or a column break
    return md_text(text)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(_cell(h) for h in header) + " |",
           "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _arms(result: TaskModelResult) -> list[str]:
    rate = f" [{ARM_INTERVALS}]"
    header = ["condition", "N", f"schema validity{rate}", f"{result.correctness_label}{rate}",
              f"wrong-but-valid{rate}", "valid/right", "valid/wrong", "invalid/right", "invalid/wrong",
              "cut", "looped"]
    rows = []
    for arm in result.arms:
        q = arm.quadrants
        counts = ["n/a"] * 4 if q is None else [
            str(q.valid_right), str(q.valid_wrong), str(q.invalid_right), str(q.invalid_wrong)]
        rows.append([arm.key, str(arm.n), rate_text(arm.validity), rate_text(arm.accuracy),
                     rate_text(arm.wrong_but_valid), *counts, cut_text(arm),
                     share_text(arm.looped, arm.n)])
    lines = _table(header, rows)
    executable = [a for a in result.arms if a.executable_accuracy is not None]
    if executable:
        lines += ["", "Executable accuracy: " + "; ".join(
            f"{md_text(a.key)} {rate_text(a.executable_accuracy)}" for a in executable)]
    lenient = [a for a in result.arms if a.unenforced]
    if lenient:
        lines += ["", "Compiled but not enforced by the engine (left to the validator; generations): " + "; ".join(
            f"{md_text(a.key)}: " + ", ".join(f"{md_text(w)} ({n})" for w, n in a.unenforced.items()) for a in lenient)]
    errors = [a for a in result.arms if a.errors]
    if errors:
        lines += ["", "Backend errors (scored as given): " + "; ".join(
            f"{md_text(a.key)} {a.errors}" for a in errors)]
    return lines


def _comparisons(result: TaskModelResult, bootstrap: dict[str, int]) -> list[str]:
    if not result.comparisons:
        return ["No paired comparisons (no prompt_only/constrained pair or "
                "unconstrained baseline in this task)."]
    lines = ["", comparisons_heading(bootstrap)]
    for comp in result.comparisons:
        lines += ["", f"**{md_text(comp.from_key)} → {md_text(comp.to_key)}** ({role_text(comp)}; N={comp.n})", ""]
        lines += [f"- {md_text(line.label)}: {md_text(line.text)}"
                  for line in comparison_lines(comp, result.correctness_label)]
    return lines[1:]


def _exclusions(result: TaskModelResult) -> list[str]:
    if not result.exclusions:
        return ["None."]
    rows = [[e.item_id, e.condition or "", e.reason] for e in result.exclusions]
    lines = [f"{len({e.item_id for e in result.exclusions})} item(s) left out of the conditions "
             "listed, and only those (every comparison is over the items both its conditions have):", ""]
    return lines + _table(["item", "condition", "reason"], rows)


def _ledger_cell(row: LedgerRow, key: str) -> str:
    cell = row.states.get(key, "excluded") + cut_mark(key in row.truncated, key in row.runaway)
    samples = samples_text(row, key)
    return f"{cell}; {samples}" if samples else cell


def _ledger(result: TaskModelResult) -> list[str]:
    keys = [a.key for a in result.arms]
    rows = []
    for row in result.ledger:
        cells = [_ledger_cell(row, k) for k in keys]
        rows.append([row.item_id, *cells])
    return _table(["item", *keys], rows)


def section_markdown(section: SectionResult, run_level: bool = False) -> str:
    """A stored section's body; a section this build does not know (a
    report.json from a plugin) shows its data as JSON."""
    registry = run_sections if run_level else sections
    if section.name in registry:
        impl = registry.get(section.name)()
        return impl.markdown(impl.load(section.data))
    return "```json\n" + json.dumps(section.data, indent=2) + "\n```\n"


def _result(result: TaskModelResult, bootstrap: dict[str, int]) -> list[str]:
    lines = [f"## {md_text(result.task)} on {md_text(result.model)}", "",
             md_text(n_line(result)), "",
             *[f"**Warning:** {md_text(w)}" + "\n" for w in result.warnings],
             f"Task: {md_text(facts(result.task_info))}", "",
             "### Conditions", "", *_arms(result), "",
             "### Comparisons", "", *_comparisons(result, bootstrap), "",
             "### Exclusions", "", *_exclusions(result), ""]
    for section in result.sections:
        lines += [f"### {md_text(section.title)}", "", section_markdown(section).rstrip(), ""]
    lines += ["### Ledger", "", *_ledger(result), ""]
    return lines


def _one_line(value: str | int | float | bool) -> str:
    # a value with a line break (the canary's generated text) would end its
    # list item and break the list: such a value is shown JSON-escaped
    if isinstance(value, str) and any(c in value for c in "\n\r\t\v\f\x85\u2028\u2029"):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _scalars(meta: dict[str, Any]) -> str:
    # keys and values come from the replay (server metadata, labels): literal text
    shown = [f"{md_text(str(k))}={md_text(_one_line(v))}" for k, v in meta.items()
             if isinstance(v, (str, int, float, bool))]
    return ", ".join(shown) or "-"


def _servers(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """A pool's servers as its model record lists them (model ids, software, dialect, counts)."""
    servers = meta.get("servers")
    listed = [s for s in servers if isinstance(s, dict)] if isinstance(servers, list) else []
    # the model ids it lists, as one value (a list is no scalar)
    return [{**s, "models": ", ".join(map(str, s["models"])) if isinstance(s.get("models"), list) else s.get("models")}
            for s in listed]


def _metadata(run: ScoredRun) -> list[str]:
    lines = ["## Run metadata", ""]
    for src in run.replays:
        lines.append(f"- replay: {md_text(source_line(src))}")
        lines.append(f"  - decoding: {_scalars(src.spec.get('decoding', {}))}")
        lines.append(f"  - hardware: {_scalars(src.hardware)}")
        for model in src.models:
            lines.append(f"  - model {md_text(str(model.get('label')))} ({md_text(str(model.get('backend')))}): "
                         f"{_scalars(model.get('metadata', {}))}")
            for engine, verdict in model.get("canary", {}).items():
                lines.append(f"    - canary {md_text(str(engine))}: {_scalars(verdict)}")
            for server in _servers(model.get("metadata", {})):
                lines.append(f"    - server {md_text(str(server.get('base_url')))}: {_scalars(server)}")
        for where, made in src.servers.items():
            lines.append(f"  - answers made by {md_text(where)}: {made}")
    boot = run.bootstrap
    lines.append(f"- paired bootstrap: {boot.get('resamples')} resamples, seed "
                 f"{boot.get('seed')}; exact McNemar tests on discordant pairs")
    return lines


def render_markdown(run: ScoredRun) -> str:
    lines = ["# conformbench report", "", *verdict_markdown(run), format_mode_text(run.format_mode), ""]
    for result in run.results:
        lines += _result(result, run.bootstrap)
    if not run.results:
        lines += ["No scored generations.", ""]
    for section in run.sections:
        lines += [f"## {md_text(section.title)}", "", section_markdown(section, run_level=True).rstrip(), ""]
    lines += _metadata(run)
    return "\n".join(lines).rstrip() + "\n"
