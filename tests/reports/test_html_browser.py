"""report.html in real headless Chromium: it renders (a non-trivial
screenshot) and the console shows no SEVERE entries."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import runfakes  # noqa: F401 - registers the fake task and section the replay uses
from browser import headless_chromium

from conformbench.reports.rescore import score_replays
from conformbench.reports.write import write_reports

GOLDEN = Path(__file__).resolve().parent / "golden"

pytestmark = pytest.mark.browser


def _driver() -> object:
    """Chromium at 1280 x 2000 px, keeping the console for ``get_log("browser")``."""
    return headless_chromium(1280, 2000, console_log=True)


def test_report_renders_in_chromium_without_console_errors(tmp_path: Path) -> None:
    shutil.copyfile(GOLDEN / "replay.jsonl", tmp_path / "replay.jsonl")
    files = write_reports(score_replays([tmp_path / "replay.jsonl"]), tmp_path / "out")
    driver = _driver()
    try:
        driver.get(files.html.as_uri())  # type: ignore[attr-defined]
        title = driver.title  # type: ignore[attr-defined]
        shot = tmp_path / "report.png"
        driver.save_screenshot(str(shot))  # type: ignore[attr-defined]
        logs = driver.get_log("browser")  # type: ignore[attr-defined]
        svg_count = len(driver.find_elements("css selector", "svg"))  # type: ignore[attr-defined]
    finally:
        driver.quit()  # type: ignore[attr-defined]
    assert title == "conformbench report"
    assert svg_count >= 1
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    severe = [entry for entry in logs if entry.get("level") == "SEVERE"]
    assert severe == []


@pytest.mark.long
def test_the_widest_reports_fit_1280_px_without_horizontal_scrolling(tmp_path: Path) -> None:
    """The ConCodeEval generation report (30 conditions with long labels)
    and the GSM8K one, in a 1280 px window: the page is no wider than the
    window, no table scrolls sideways, and no label breaks inside ``->``."""
    from conformbench.runner.shipped import shipped_replay

    driver = _driver()
    try:
        driver.set_window_size(1280, 1000)  # type: ignore[attr-defined]
        for name in ("concodeeval-generation", "gsm8k"):
            files = write_reports(score_replays([shipped_replay(name)]), tmp_path / name)
            driver.get(files.html.as_uri())  # type: ignore[attr-defined]
            page, window = driver.execute_script(  # type: ignore[attr-defined]
                "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            # the per-item ledger is folded away in a <details>, measured opened below
            scrolling = driver.execute_script(  # type: ignore[attr-defined]
                "return [...document.querySelectorAll('div.wide')]"
                ".filter(d => !d.closest('details') && d.scrollWidth > d.clientWidth + 1).length")
            # each '->' of a label on one line: the '-' and the '>' share a line box
            split = driver.execute_script(  # type: ignore[attr-defined]
                "let bad = 0; const r = document.createRange();"
                "for (const c of document.querySelectorAll('code.key')) {"
                " const w = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);"
                " for (let n = w.nextNode(); n; n = w.nextNode()) {"
                "  for (let i = n.data.indexOf('->'); i >= 0; i = n.data.indexOf('->', i + 1)) {"
                "   r.setStart(n, i); r.setEnd(n, i + 1); const a = r.getBoundingClientRect().top;"
                "   r.setStart(n, i + 1); r.setEnd(n, i + 2); const b = r.getBoundingClientRect().top;"
                "   if (Math.abs(a - b) > 1) bad++; } } } return bad;")
            driver.save_screenshot(str(tmp_path / f"{name}.png"))  # type: ignore[attr-defined]
            ledger = _opened_ledger(driver)
            assert page <= window, f"{name}: page {page} px wide in a {window} px window"
            assert scrolling == 0, f"{name}: {scrolling} tables scroll sideways"
            assert split == 0
            assert (tmp_path / f"{name}.png").stat().st_size > 20_000
            # opened, the ledger fits too (issue #29: 30 conditions became 6 tables of 5)
            assert ledger["tables"] >= 1 and ledger["scrolling"] == 0, f"{name}: {ledger}"
            assert ledger["page"] <= window, f"{name}: the opened ledger makes the page {ledger['page']} px wide"
            assert ledger["rows"] == ledger["tables"] * ledger["items"], f"{name}: {ledger}"
    finally:
        driver.quit()  # type: ignore[attr-defined]


def _opened_ledger(driver: object) -> dict[str, int]:
    """Open every folded ledger and measure its tables: how many, how many
    scroll sideways, their item rows, the page's width once they are open."""
    return driver.execute_script(  # type: ignore[attr-defined,no-any-return]
        "document.querySelectorAll('details').forEach(d => { d.open = true; });"
        "const t = [...document.querySelectorAll('table.ledger')];"
        "const items = new Set(t.flatMap(x => [...x.querySelectorAll('tbody th.item')].map(c => c.textContent)));"
        "return {tables: t.length, items: items.size,"
        " rows: t.reduce((n, x) => n + x.tBodies[0].rows.length, 0),"
        " scrolling: t.filter(x => x.parentElement.scrollWidth > x.parentElement.clientWidth + 1).length,"
        " page: document.documentElement.scrollWidth};")


@pytest.mark.long
def test_the_beam_comparison_and_against_reports_fit_1280_px(tmp_path: Path) -> None:
    """Issue #44: the ConCodeEval beams-against-greedy report (the
    "Decoding against decoding" table, 14 columns in report.md) was 1384 px
    wide in a 1280 px window. Rescored as ``demo`` does (with --against), it
    fits: no page scroll, no table scrolling sideways, every column shown."""
    from conformbench.cli.demo import AGAINST
    from conformbench.runner.shipped import shipped_replay

    name = "concodeeval-beam"
    run = score_replays([shipped_replay(name)], against=[shipped_replay(other) for other in AGAINST[name]])
    files = write_reports(run, tmp_path / name)
    driver = _driver()
    try:
        driver.set_window_size(1280, 1000)  # type: ignore[attr-defined]
        driver.get(files.html.as_uri())  # type: ignore[attr-defined]
        page, window, scrolling, columns = driver.execute_script(  # type: ignore[attr-defined]
            "const h = [...document.querySelectorAll('h2')].find(x => x.textContent.startsWith('Decoding against'));"
            "let t = h; while (t && t.tagName !== 'TABLE') { t = t.nextElementSibling;"
            " if (t && t.querySelector && t.tagName !== 'TABLE' && t.querySelector('table')) t = t.querySelector('table'); }"
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth,"
            " [...document.querySelectorAll('div.wide')].filter(d => !d.closest('details')"
            "  && d.scrollWidth > d.clientWidth + 1).length, t ? t.rows[0].cells.length : 0];")
        driver.save_screenshot(str(tmp_path / "beam.png"))  # type: ignore[attr-defined]
    finally:
        driver.quit()  # type: ignore[attr-defined]
    assert columns >= 12, "the against table is missing"
    assert page <= window, f"{name}: page {page} px wide in a {window} px window"
    assert scrolling == 0, f"{name}: {scrolling} tables scroll sideways"
