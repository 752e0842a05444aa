"""report.html in real headless Chromium: it renders (a non-trivial
screenshot) and the console shows no SEVERE entries."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import runfakes  # noqa: F401 - registers the fake task and section the replay uses

from conformbench.reports.write import write_reports
from conformbench.scoring.score import score_replays

GOLDEN = Path(__file__).resolve().parent / "golden"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = pytest.mark.browser


def _driver() -> object:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("chromium/chromedriver not installed (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium not installed (test extra)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,2000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    return webdriver.Chrome(options=options, service=service)


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
