"""Progress for runs whose stderr is a log file (nohup, CI): plain lines."""

from __future__ import annotations

import pytest

from conformbench.runner import progress
from conformbench.runner.progress import RunProgress, progress_line


def test_progress_line_counts_share_rate_and_eta() -> None:
    assert progress_line("gen", 160, 2000, 0.08) == "gen: 160/2000 items×conditions (8.0%), 0.08/s, eta 6h23m"
    assert progress_line("gen", 10, 20, 2.0, "schemas") == "gen: 10/20 schemas (50.0%), 2.00/s, eta 5s"
    assert progress_line("gen", 20, 20, 2.0).endswith("eta 0s")
    assert progress_line("gen", 0, 20, 0.0).endswith("eta ?")


def test_a_log_file_gets_plain_lines_resumed_units_counted(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.0)
    with RunProgress(total=10, done=4) as bar:  # 4 resumed from the replay
        bar.describe("smollm2 generation")
        bar.advance(2, elapsed_s=1.0)
        bar.advance(4, elapsed_s=3.0)
    err = capsys.readouterr().err
    assert "smollm2 generation: 6/10 items×conditions (60.0%), 2.00/s, eta known after 5 done" in err  # 2 done here: too few
    assert "smollm2 generation: 10/10 items×conditions (100.0%), 2.00/s, eta 0s" in err


def test_lines_are_spaced_and_the_last_one_always_comes(
        capsys: pytest.CaptureFixture[str]) -> None:
    with RunProgress(total=3) as bar:  # the 30 s interval has not passed between advances
        for i in range(3):
            bar.advance(1, elapsed_s=float(i + 1))
    # (rich also draws its bar once, at the end)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("run: ")]
    assert lines == ["run: 3/3 items×conditions (100.0%), 1.00/s, eta 0s"]


def test_quiet_prints_nothing(capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.0)
    with RunProgress(total=2, quiet=True) as bar:
        bar.advance(2, elapsed_s=1.0)
    assert capsys.readouterr().err == ""


def test_no_eta_until_it_means_something(capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The first unit also pays for warm-up: a log gets no ETA from it."""
    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.0)
    assert progress_line("gen", 1, 82, 0.02, fresh=1) == "gen: 1/82 items×conditions (1.2%), 0.02/s, eta known after 5 done"
    assert progress_line("gen", 5, 82, 0.1, fresh=5).endswith("eta 12m50s")
    with RunProgress(total=20) as bar:
        bar.advance(1, elapsed_s=65.0)
        bar.advance(4, elapsed_s=70.0)
    err = capsys.readouterr().err
    assert "run: 1/20 items×conditions (5.0%), 0.02/s, eta known after 5 done" in err
    assert "run: 5/20 items×conditions (25.0%), 0.07/s, eta 3m30s" in err


def test_a_log_hears_each_stage_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    """Loading a model and the canary count no unit: a log file still gets a
    line for each as it starts (not the first line after a minute)."""
    with RunProgress(total=3) as bar:
        bar.stage("smollm2-135m: loading the embedded SmolLM2-135M (llamacpp backend)")
        assert "smollm2-135m: loading the embedded SmolLM2-135M" in capsys.readouterr().err
        bar.stage("smollm2-135m: constraint canary (llguidance)")
        assert "constraint canary (llguidance)" in capsys.readouterr().err


def test_brackets_in_a_line_are_text_not_markup(capsys: pytest.CaptureFixture[str]) -> None:
    """A tools arm's mode (``tools[auto]``) was read as rich markup and vanished from the log."""
    with RunProgress(total=1) as bar:
        bar.stage("tools canary (tools[auto], tools[named,strict])")
        bar.log("m: tools[required]: a call")
    err = capsys.readouterr().err
    assert "tools[auto], tools[named,strict]" in err and "m: tools[required]: a call" in err
