"""engines.md and engines.json: how a keyword probe is written.

A tool-argument probe (``engines probe --tools MODE``) is shown in
docs/runtime.md's server x mode x strict layout: a row per mode with its
``tool_choice``, ``strict`` (off or on), what the mode's tools canary got
(``call forced (canary)``) and a column per keyword. The terminal prints the
same cells turned a quarter (a row per keyword, a column per mode), since
twenty keyword columns do not fit a terminal."""

from __future__ import annotations

from pathlib import Path

from conformbench.audits.probe.journal import JOURNAL_NAME
from conformbench.audits.probe.records import TECHNIQUE, EngineProbe, KeywordResult, ProbeReport
from conformbench.audits.probe.server import server_legend, server_lines
from conformbench.errors import UsageError
from conformbench.files import write_files
from conformbench.records.generation import constraint_label
from conformbench.records.markdown_escape import md_text
from conformbench.records.tool_calls import ToolMode, parse_tool_mode

__all__ = ["CANARY_COLUMN", "MODE_COLUMNS", "TOOLS_LEGEND", "is_tools_probe", "mode_label", "probe_markdown",
           "tools_probe_markdown", "tools_probe_rows", "verdict_cell", "write_probe"]


def verdict_cell(result: KeywordResult) -> str:
    """The verdict with the attempts it rests on, as the terminal table and
    engines.md both print it: ``enforced (2/2 held)``, ``ignored (1/2 broke)``,
    a server's ``not enforced (1/2 broke)``."""
    if any(s.twin for s in result.samples) and result.status in ("enforced", "not enforced"):
        return f"{result.status} (twins)"  # decided by greedy twins (probe/twins.py)
    judged = [s for s in result.samples if s.parsed and s.error is None]
    broke = sum(result.keyword in s.violations for s in judged)
    if result.status == "enforced" and judged:
        return f"enforced ({len(judged)}/{len(result.samples)} held)"
    if result.status in ("ignored", "not enforced") and judged:
        return f"{result.status} ({broke}/{len(result.samples)} broke)"
    return str(result.status)


def _model_line(report: ProbeReport) -> str:
    model = report.model.get("model_file") or report.model.get("model")
    sha = report.model.get("model_sha256")
    which = f"(sha256 {sha})" if sha else "(as named in the requests: a server does not say which file it serves)"
    # the techniques the verdicts rest on, as each keyword records its own
    used = sorted({k.technique for e in report.engines for k in e.keywords}) or [TECHNIQUE]
    return (f"Model: {md_text(str(model))} {which}; {report.settings['n_per_keyword']} nudged sample(s) per keyword, "
            f"max_tokens {report.settings['max_tokens']}, greedy. Technique of the verdicts: "
            f"{'; '.join(used)}.")


def probe_markdown(report: ProbeReport) -> str:
    if is_tools_probe(report):
        return tools_probe_markdown(report)
    names = [md_text(constraint_label(e.engine, e.output_format)) for e in report.engines]
    lines = [
        "# Constraint engine keyword probe",
        "",
        _model_line(report),
        "",
        *server_lines(report.server),
        "| keyword | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for keyword in report.settings["keywords"]:
        cells = []
        for probe in report.engines:
            result = next(r for r in probe.keywords if r.keyword == keyword)
            cells.append(md_text(verdict_cell(result)))
        lines.append(f"| {md_text(keyword)} | " + " | ".join(cells) + " |")
    lines += ["", "| engine | version | canary | note |", "|---|---|---|---|"]
    for probe in report.engines:
        note = md_text(probe.reason or probe.canary_detail or "")
        name = md_text(constraint_label(probe.engine, probe.output_format))
        lines.append(f"| {name} | {md_text(probe.version or '-')} | {md_text(str(probe.canary))} | {note} |")
    lines += ["", ("enforced (k/n held): none of the n judged nudged outputs violated the keyword (evidence on "
                   "n attempts, not proof); ignored (k/n broke): k outputs violated it (the engine let them "
                   "through); refused: the engine would not compile the schema; "
                   "inconclusive: no output could be judged; (twins): decided by greedy twins, the violating document "
                   "asked for without and with the schema (audits/probe/twins.py). Details per sample in engines.json."
                   + server_legend([e.engine for e in report.engines])), ""]
    return "\n".join(lines)


#: the columns that say which mode a row is (docs/runtime.md's names)
MODE_COLUMNS = ("tool_choice", "strict")
CANARY_COLUMN = "call forced (canary)"

#: what each verdict means through the tools API (tools.py), a line each
TOOLS_LEGEND = (
    "tool_choice: the mode's tool_choice (named: the one function by name);",
    "  strict: each function sent with \"strict\": true (on) or without (off)",
    "call forced (canary): the tools canary's call, the schema's enum",
    "  constant held or not, and the finish reason",
    "enforced (k/n held): every call's arguments satisfied the schema",
    "  (evidence on n attempts, not proof)",
    "not enforced (k/n broke): k calls' arguments broke the keyword",
    "inconclusive: a sample made no call (auto forces none; a cap cut it),",
    "  its arguments were not JSON or broke the schema elsewhere",
    "refused: the server answered the schema with an HTTP 400/422",
    "Each sample is in engines.json.",
)


def is_tools_probe(report: ProbeReport) -> bool:
    """Whether the report probed tool arguments (``--tools``) rather than engines."""
    return bool(report.settings.get("tool_modes"))


def _mode(probe: EngineProbe) -> ToolMode:
    """The mode of a tools probe's row (its engine label is ``tools[MODE]``)."""
    return parse_tool_mode(probe.engine.removeprefix("tools[").removesuffix("]"))


def mode_label(probe: EngineProbe) -> str:
    """``tool_choice required, strict on``: the mode in the table's words."""
    mode = _mode(probe)
    return f"tool_choice {mode.choice}, strict {'on' if mode.strict else 'off'}"


def _canary_cell(probe: EngineProbe) -> str:
    """The canary's line without its ``tools[MODE]: `` head (the row says the mode)."""
    detail = probe.canary_detail or probe.canary
    return detail.split(": ", 1)[1] if detail.startswith(f"{probe.engine}: ") else detail


def tools_probe_rows(report: ProbeReport) -> tuple[list[str], list[list[str]]]:
    """The header and a row per mode: tool_choice, strict, the canary, a
    verdict per keyword (in the probe's keyword order)."""
    keywords = list(report.settings["keywords"])
    rows = []
    for probe in report.engines:
        mode = _mode(probe)
        verdicts = {k.keyword: verdict_cell(k) for k in probe.keywords}
        rows.append([mode.choice, "on" if mode.strict else "off", _canary_cell(probe),
                     *(verdicts.get(k, "-") for k in keywords)])
    return [*MODE_COLUMNS, CANARY_COLUMN, *keywords], rows


def tools_probe_markdown(report: ProbeReport) -> str:
    """engines.md of a tools probe."""
    header, rows = tools_probe_rows(report)
    lines = [
        "# Tool-argument keyword probe (through the server's tools API)",
        "",
        _model_line(report) + " Each probe schema is one function's parameters; the first call's arguments "
        "are validated against the whole schema.",
        "",
        *server_lines(report.server),
        "| " + " | ".join(md_text(h) for h in header) + " |",
        "|---" * len(header) + "|",
        *("| " + " | ".join(md_text(cell) for cell in row) + " |" for row in rows),
        "",
        " ".join(line.strip() for line in TOOLS_LEGEND),
        "",
    ]
    return "\n".join(lines)


def write_probe(report: ProbeReport, out_dir: Path) -> tuple[Path, Path]:
    """Write DIR/engines.json and DIR/engines.md; returns both paths."""
    json_path, md_path = out_dir / "engines.json", out_dir / "engines.md"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write the probe to {out_dir}: {exc.strerror or exc}") from None
    # both whole or neither: a kill never leaves a new engines.json beside an old engines.md
    write_files({json_path: report.model_dump_json(indent=2) + "\n", md_path: probe_markdown(report)})
    (out_dir / JOURNAL_NAME).unlink(missing_ok=True)  # the whole probe is written: its journal is done
    return json_path, md_path
