"""Issue #48: the cost section of a report with multi-round arms, at 1280 px
in real headless Chromium, does not make the page scroll sideways (its
tables scroll in their own box)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import headless_chromium

from conformbench.records.results import Rate
from conformbench.reports.html import _CSS
from conformbench.scoring.cost import ArmCost, CostData, RoundRates
from conformbench.scoring.cost_section import CostSection

pytestmark = pytest.mark.browser

KEYS = ["prompt_only[answer]", "constrained[answer]@llguidance", "repair[answer]->constrained[answer]@llguidance",
        "reason_then_constrain[answer]@llguidance", "repair[answer]"]


def _arm(key: str, rounds: int) -> ArmCost:
    rate = Rate(k=3, n=6, rate=0.5, ci95=(0.19, 0.81))
    by_round = [RoundRates(round=r, validity=rate, accuracy=rate, wrong_but_valid=rate, answered=6)
                for r in range(1, rounds + 1)]
    return ArmCost(key=key, n=6, calls=1.0, calls_ci95=(1.0, 1.0), rounds=float(rounds), prompt_tokens=1234.5,
                   completion_tokens=321.0, seconds=12.25, shared_calls=6, valid=3, right=3, calls_per_valid=2.0,
                   calls_per_right=2.0, tokens_per_valid=3111.0, tokens_per_right=3111.0, seconds_per_valid=24.5,
                   seconds_per_right=24.5, accuracy=Rate(k=0, n=6, rate=0.0, ci95=(0.0, 0.39)), by_round=by_round)


def test_the_cost_section_at_1280_px_does_not_scroll_the_page(tmp_path: Path) -> None:
    body = CostSection().html(CostData(arms=[_arm(k, 3 if "repair" in k else 1) for k in KEYS]))
    page = tmp_path / "cost.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><style>{_CSS}</style></head>"
                    f"<body>{body}</body></html>")
    driver = headless_chromium(1280, 1200)
    try:
        driver.get(page.as_uri())
        driver.save_screenshot(str(tmp_path / "cost.png"))
        wide, view = driver.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    finally:
        driver.quit()
    assert wide <= view, f"the page scrolls sideways: {wide} px wide in a {view} px window"
