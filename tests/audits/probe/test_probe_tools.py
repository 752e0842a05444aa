"""The verdicts of the tool-argument probe (``engines probe --tools``) on
its samples, and its tables (engines.md's, in docs/runtime.md's columns, and
the terminal's); the probe itself runs against real servers in
tests/backends/test_tools_servers.py."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from conformbench.audits.probe.markdown import probe_markdown
from conformbench.audits.probe.records import EngineProbe, KeywordResult, ProbeReport, ProbeSample
from conformbench.audits.probe.tools import _verdict
from conformbench.cli.engines.probe_table import probe_table


def _sample(violations: list[str], *, error: str | None = None, parsed: bool = True,
            finish: str = "stop") -> ProbeSample:
    return ProbeSample(prompt="p", text="{}", finish_reason=finish, parsed=parsed, violations=violations,
                       error=error, carried=True)


def test_a_call_breaking_the_keyword_is_not_enforced_and_valid_calls_are_enforced():
    assert _verdict([_sample(["enum"]), _sample([])], "enum")[0] == "not enforced"
    assert _verdict([_sample([]), _sample([])], "enum") == ("enforced", "0/2 calls' arguments violate enum")


def test_no_call_and_a_failed_request_are_inconclusive_and_say_which():
    status, detail = _verdict([_sample([], error="no call", parsed=False), _sample([])], "enum")
    assert status == "inconclusive" and "1/2 answers made no call" in detail
    status, detail = _verdict([_sample([], error="HTTP 500: boom", parsed=False, finish="error")], "enum")
    assert status == "inconclusive" and "requests failed: HTTP 500: boom" in detail
    assert _verdict([_sample([], parsed=False)], "enum")[0] == "inconclusive"  # arguments not JSON


def _probe(mode: str, canary: str, statuses: dict[str, str]) -> EngineProbe:
    keywords = [KeywordResult(keyword=k, status=s, detail="d", probe_schema="{}",  # type: ignore[arg-type]
                              samples=[_sample([k] if s == "not enforced" else [])]) for k, s in statuses.items()]
    return EngineProbe(engine=f"tools[{mode}]", version=None, available=True, reason=None, canary="passed",
                       canary_detail=f"tools[{mode}]: {canary}", keywords=keywords)


def _report() -> ProbeReport:
    return ProbeReport(created="2026-12-07T00:00:00+00:00", model={"model": "smol"},
                       settings={"tool_modes": ["required", "named,strict"], "keywords": ["enum", "maxLength"],
                                 "n_per_keyword": 1, "max_tokens": 48, "seed": 0},
                       engines=[_probe("required", "a call (call forced; arguments held to the schema; finish "
                                       "tool_calls)", {"enum": "enforced", "maxLength": "not enforced"}),
                                _probe("named,strict", "no call (call not forced; no call to judge; finish stop)",
                                       {"enum": "inconclusive", "maxLength": "refused"})])


def _docs_header() -> list[str]:
    """The columns of docs/runtime.md's server x mode x strict table."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "runtime.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("| server | `tool_choice`"))
    return [cell.strip().strip("`") for cell in line.strip("|").split("|")]


def test_engines_md_of_a_tools_probe_has_the_docs_columns_a_row_per_mode() -> None:
    """The table docs/runtime.md is built from: a row per mode, the mode
    split into tool_choice and strict, the canary's call, a column per
    keyword named as the docs' table names it (golden)."""
    md = probe_markdown(_report())
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert table == [
        "| tool_choice | strict | call forced (canary) | enum | maxLength |",
        "|---|---|---|---|---|",
        "| required | off | a call (call forced; arguments held to the schema; finish tool_calls) | "
        "enforced (1/1 held) | not enforced (1/1 broke) |",
        "| named | on | no call (call not forced; no call to judge; finish stop) | inconclusive | refused |",
    ]
    header = table[0].strip("|").split(" | ")
    docs = _docs_header()
    assert [h.strip() for h in header] == [c for c in docs if c in {h.strip() for h in header}]
    assert "engine | version" not in md and "Tool-argument keyword probe" in md
    assert "not enforced (k/n broke)" in md and "refused: the server answered" in md


def test_the_terminal_table_of_a_tools_probe_names_each_modes_choice_and_strict() -> None:
    table, legend = probe_table(_report())
    console = Console(record=True, width=200)
    console.print(table)
    text = console.export_text()
    assert "tool_choice required, strict off" in text and "tool_choice named, strict on" in text
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if line.count("│") >= 3}
    assert set(rows) == {"call forced (canary)", "enum", "maxLength"} and "┃ keyword" in text
    assert "enforced (1/1 held)" in rows["enum"] and "refused" in rows["maxLength"]
    assert any(line.startswith("tool_choice:") for line in legend) and not any("ignored" in line for line in legend)
