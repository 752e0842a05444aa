"""report.html's per-item ledger (issue #29): a run with many conditions
gets one table per condition group, each narrow enough for the page, every
item in each, instead of one table far wider than the page (the browser
test measures the real widths at 1280 px)."""

from __future__ import annotations

import re

import pytest

from conformbench.reports.html import render_html
from conformbench.reports.ledger_html import column_px, ledger_groups, ledger_html
from conformbench.reports.rescore import score_replays
from conformbench.runner.shipped import shipped_replay


def test_few_conditions_stay_one_table_with_full_labels() -> None:
    keys = ["unconstrained", "prompt_only[answer]", "constrained[answer]@llguidance",
            "reason_then_constrain[answer]@llguidance"]
    (group,) = ledger_groups(keys)
    assert group.heading == "" and list(group.keys) == keys == list(group.labels)


def test_many_conditions_split_by_what_their_labels_share() -> None:
    fmts = ("json", "yaml", "xml", "python", "nl")
    keys = [f"{s}->{o}/0shot/{arm}" for arm in ("prompt_only[schema]", "constrained[schema]@llguidance")
            for s in fmts for o in fmts[:3]]
    groups = ledger_groups(keys)
    assert [len(g.keys) for g in groups] == [5] * 6
    assert [g.heading for g in groups] == ["0shot/prompt_only[schema]"] * 3 + ["0shot/constrained[schema]@llguidance"] * 3
    assert [g.part for g in groups] == ["1 of 3", "2 of 3", "3 of 3"] * 2
    assert [k for g in groups for k in g.keys] == keys  # each condition once, in reading order
    assert groups[0].labels[:2] == ("json->json", "json->yaml")


def test_labels_without_a_shared_part_are_chunked_whole() -> None:
    keys = [f"arm{i}[answer]@engine{i}" for i in range(11)]
    groups = ledger_groups(keys)
    assert [len(g.keys) for g in groups] == [6, 5]
    assert all(g.labels == g.keys for g in groups)


def test_a_long_label_makes_its_column_wider() -> None:
    assert column_px("json->json") == column_px("a") < column_px("reason_then_constrain[answer]@llguidance")
    assert column_px("x/" + "y" * 40) > column_px("x" * 20 + "/" + "y" * 20)  # it wraps after a "/"


@pytest.mark.long
def test_the_30_condition_report_lists_every_item_in_every_table() -> None:
    run = score_replays([shipped_replay("concodeeval-generation")])
    result = run.results[0]
    html = ledger_html(result)
    tables = html.count('<table class="ledger">')
    assert tables == 6 and f"{len(result.ledger)} items × 30 conditions, in 6 tables" in html
    for row in result.ledger[:5]:
        assert html.count(f'<th class="item" scope="row">{row.item_id}</th>') == tables
    widest = max(len(re.findall(r"<th title=", t)) for t in html.split('<table class="ledger">')[1:])
    assert widest == 5
    assert html in render_html(run)
