"""The probe journal (issue #48): each keyword result is on disk as soon as
it is made, an interrupted probe rerun with the same settings skips those,
and a journal of other settings is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.audits.probe.journal import JOURNAL_NAME, ProbeJournal
from conformbench.audits.probe.run import ProbeConfig, _probe_keyword, select_cases, write_probe
from conformbench.errors import UsageError
from conformbench.records.generation import GenerationResult


class _Fixed:
    """Answers every request with one fixed text, counting the requests."""

    def __init__(self, text: str) -> None:
        self.text, self.calls = text, 0

    def generate(self, request: object) -> GenerationResult:
        self.calls += 1
        return GenerationResult(text=self.text, finish_reason="stop")


HEADER = {"settings": {"n_per_keyword": 2}, "model": {"model_sha256": "x"}}


def test_a_keyword_written_before_an_interrupt_is_not_generated_again(tmp_path: Path) -> None:
    (case,) = select_cases(["maximum"])
    config = ProbeConfig(n_per_keyword=2)
    backend = _Fixed('{"value": 1000000}')
    ticks: list[int] = []
    first = _probe_keyword(backend, case, "gbnf", config, lambda _l, n: ticks.append(n),
                           journal=ProbeJournal(tmp_path, HEADER))
    assert backend.calls == 2 and (tmp_path / JOURNAL_NAME).is_file()
    # a new process reads it back: no generation, the same verdict, the steps counted as done
    again = _probe_keyword(backend, case, "gbnf", config, lambda _l, n: ticks.append(n),
                           journal=ProbeJournal(tmp_path, HEADER))
    assert backend.calls == 2 and again == first and ticks == [1, 1, 2]


def test_a_journal_of_other_settings_is_refused_and_a_torn_line_is_redone(tmp_path: Path) -> None:
    journal = ProbeJournal(tmp_path, HEADER)
    journal.record("gbnf", "json", "maximum", {"x": 1})
    with (tmp_path / JOURNAL_NAME).open("a") as fh:
        fh.write('{"engine": "gbnf", "output_fo')  # a kill mid-write
    rerun = ProbeJournal(tmp_path, HEADER)
    assert set(rerun.done) == {("gbnf", "json", "maximum")}
    # what the rerun redoes is read back by the next one (not glued onto the torn line)
    rerun.record("gbnf", "json", "minimum", {"x": 2})
    assert set(ProbeJournal(tmp_path, HEADER).done) == {("gbnf", "json", "maximum"), ("gbnf", "json", "minimum")}
    with pytest.raises(UsageError, match="other settings"):
        ProbeJournal(tmp_path, {**HEADER, "settings": {"n_per_keyword": 4}})


def test_the_journal_goes_once_the_probe_is_written(tmp_path: Path) -> None:
    from conformbench.audits.probe import ProbeReport

    ProbeJournal(tmp_path, HEADER)
    write_probe(ProbeReport(created="t", settings={"keywords": [], "n_per_keyword": 1, "max_tokens": 8}, model={}, engines=[]), tmp_path)
    assert not (tmp_path / JOURNAL_NAME).exists()
