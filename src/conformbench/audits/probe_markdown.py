"""engines.md and engines.json: how a keyword probe is written."""

from __future__ import annotations

from pathlib import Path

from conformbench.audits.probe_journal import JOURNAL_NAME
from conformbench.audits.probe_records import TECHNIQUE, ProbeReport
from conformbench.audits.probe_server import server_legend, server_lines
from conformbench.errors import UsageError
from conformbench.files import write_files
from conformbench.records.generation import constraint_label
from conformbench.records.markdown_escape import md_text

__all__ = ["probe_markdown", "write_probe"]


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
            cells.append(md_text(result.status))
        lines.append(f"| {md_text(keyword)} | " + " | ".join(cells) + " |")
    lines += ["", "| engine | version | canary | note |", "|---|---|---|---|"]
    for probe in report.engines:
        note = md_text(probe.reason or probe.canary_detail or "")
        name = md_text(constraint_label(probe.engine, probe.output_format))
        lines.append(f"| {name} | {md_text(probe.version or '-')} | {md_text(str(probe.canary))} | {note} |")
    lines += ["", ("enforced: no nudged output violated the keyword; ignored: an output violated it "
                   "(the engine let it through); refused: the engine would not compile the schema; "
                   "inconclusive: no output could be judged. Details per sample in engines.json."
                   + server_legend([e.engine for e in report.engines])), ""]
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
