"""Every published ``engines cost`` table ships its journal: the report of
docs/evidence/cost-serve/ is computed here from its requests.jsonl (no
server, no model; the reports in evidence folders are not kept, they are
made again), and the table docs/results.md and BENCHMARKS.md print is that
report's, figure by figure."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conformbench.serving.journal import JOURNAL_NAME, CostJournal
from conformbench.serving.measure import CostConfig, batch_plan
from conformbench.serving.report import build_report
from conformbench.serving.workload import bfcl_prompts

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = ROOT / "docs" / "evidence" / "cost-serve"


def _recomputed(tmp_path: Path) -> dict[str, Any]:
    shutil.copy(EVIDENCE / JOURNAL_NAME, tmp_path / JOURNAL_NAME)
    header = json.loads((tmp_path / JOURNAL_NAME).read_text(encoding="utf-8").splitlines()[0])
    journal = CostJournal(tmp_path, {k: v for k, v in header.items() if k != "format"})
    config = CostConfig(levels=tuple(header["levels"]), n=header["n"], repeats=header["repeats"],
                        caches=tuple(header["caches"]), rate=header["rate"], seed=header["seed"],
                        max_tokens=header["max_tokens"], timeout_s=header["timeout_s"])
    prompts = bfcl_prompts(config.n)
    assert [p.id for p in prompts] == header["ids"]
    report = build_report(journal, prompts, batch_plan(config), {})
    return json.loads(report.model_dump_json())


def test_the_shipped_journal_is_complete_and_says_what_it_lost(tmp_path: Path) -> None:
    report = _recomputed(tmp_path)
    rows = [json.loads(line) for line in (EVIDENCE / JOURNAL_NAME).read_text(encoding="utf-8").splitlines()[1:]]
    failed = [r for r in rows if r["kind"] == "request" and r["error"]]
    assert report["complete"] and report["lost"] == len(failed) == 11  # each a timeout queued at concurrency 4
    assert all(r["concurrency"] == 4 and r["error"].startswith("Timeout") for r in failed)


def _ratio(r: dict[str, Any]) -> str:
    if r["median"] is None:
        return "n/a (<2 answers)"
    return f"{r['median']:.2f}" + (f" ({r['low']:.2f}–{r['high']:.2f})" if len(r["per_repeat"]) > 1 else "")


@pytest.mark.parametrize("doc", ["docs/results.md", "BENCHMARKS.md"])
def test_the_published_table_is_the_reports(doc: str, tmp_path: Path) -> None:
    shipped = _recomputed(tmp_path)
    text = (ROOT / doc).read_text(encoding="utf-8")
    for c in shipped["comparisons"]:
        on = next(a for a in shipped["arms"] if a["concurrency"] == c["concurrency"] and a["arm"] == c["arm"])
        off = next(a for a in shipped["arms"] if a["concurrency"] == c["concurrency"] and a["arm"] == "off")
        row = (f"| serve | {c['concurrency']} | {c['cache']} | {_ratio(c['tpot_ratio'])} | {_ratio(c['ttft_ratio'])} | "
               f"{_ratio(c['tok_s_ratio'])} | {off['validity']['k']}/{off['validity']['n']} → "
               f"{on['validity']['k']}/{on['validity']['n']} | {off['errors']}/{on['errors']} |")
        assert row in text, row
