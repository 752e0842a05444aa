"""The engine check keeps each schema's outcome as it is made: a rerun in the
same directory reads them back instead of checking again, a changed schema or
other settings are checked anew, and an interrupted last line is redone."""

from __future__ import annotations

from pathlib import Path

from conformbench.audits.engine_check import CheckConfig, run_engine_check
from conformbench.audits.engine_check.sources import CheckSchema, CheckSource, Instance
from conformbench.audits.engine_check.store import PARTIAL_NAME, OutcomeStore, StoreSettings

CONFIG = CheckConfig(engines=("gbnf",), mask_positions=1)


def _source(minimum: int) -> CheckSource:
    schema = {"type": "integer", "minimum": minimum}
    instances = (Instance("five", 5, True, "minimum"), Instance("three", 3, minimum <= 3, "minimum"))
    refused = CheckSchema("refused", "refused", "", {"type": "string", "pattern": "(?=a)"}, ())
    return CheckSource("known", "", (CheckSchema("minimum", "minimum", "", schema, instances), refused))


def _settings(vocab, mask_positions: int = 1) -> StoreSettings:
    return StoreSettings(tokenizer=Path(vocab.key).name, n_vocab=vocab.n_vocab, serialisations=["compact"],
                         mask_positions=mask_positions, compile_timeout_s=CONFIG.compile_timeout_s)


def _run(vocab, tmp_path: Path, source: CheckSource, mask_positions: int = 1):
    store = OutcomeStore(tmp_path, _settings(vocab, mask_positions))
    try:
        return run_engine_check(vocab, [source], CONFIG, store=store), store
    finally:
        store.close()


def test_a_rerun_reads_every_outcome_back_with_the_same_verdicts(smollm_vocab, tmp_path):
    first, _ = _run(smollm_vocab, tmp_path, _source(0))
    again, store = _run(smollm_vocab, tmp_path, _source(0))
    assert first.engines[0].resumed == 0 and again.engines[0].resumed == 2
    assert len(store) == 2
    before, after = first.engines[0].sources[0], again.engines[0].sources[0]
    assert after.model_dump(exclude={"seconds"}) == before.model_dump(exclude={"seconds"})
    assert (after.valid, after.refused) == (2, 1)
    assert after.refusals == before.refusals and after.refusals[0].schema_id == "refused"


def test_a_changed_schema_is_checked_again(smollm_vocab, tmp_path):
    _run(smollm_vocab, tmp_path, _source(0))
    again, _ = _run(smollm_vocab, tmp_path, _source(4))
    assert again.engines[0].resumed == 1  # only the unchanged (refused) schema
    # gbnf ignores minimum: the now invalid 3 is accepted, under-constrained
    result = again.engines[0].sources[0]
    assert (result.under, result.cases[0].document) == (1, "3")


def test_other_settings_move_the_file_aside(smollm_vocab, tmp_path):
    _run(smollm_vocab, tmp_path, _source(0))
    again, store = _run(smollm_vocab, tmp_path, _source(0), mask_positions=2)
    assert store.moved_aside == tmp_path / (PARTIAL_NAME + ".old")
    assert again.engines[0].resumed == 0


def test_an_interrupted_last_line_is_redone(smollm_vocab, tmp_path):
    _run(smollm_vocab, tmp_path, _source(0))
    path = tmp_path / PARTIAL_NAME
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][:40])  # the last outcome half-written
    again, _ = _run(smollm_vocab, tmp_path, _source(0))
    assert again.engines[0].resumed == 1
    assert path.read_text().count("\n") == 3  # settings + two outcomes, no damaged line left
