"""Every replay header layout reads and rescores as the current one
(records.migrations). The fixtures in ``layouts/`` are the first 4
items of the shipped gsm8k replay under each older header: version 1 as
written on 2026-11-29 (no grown, no build, no loop stop, no per-turn
budgets), as shipped (2026-11-30) and as the writer before version 2
wrote it (think budgets, build facts; defaults left out)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.records.migrations import REPLAY_VERSION
from conformbench.records.replay import ReplayHeader
from conformbench.records.replay_file import ReplayWriter, read_replay
from conformbench.records.spec import RunSpec
from conformbench.reports.rescore import score_replays
from conformbench.runner.shipped import shipped_replays

LAYOUTS = Path(__file__).parent / "layouts"
OLD = sorted(LAYOUTS.glob("v1-*.jsonl"))


def _header_line(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as fh:
        return dict(json.loads(fh.readline()))


def _as_current(old: Path, new: Path) -> None:
    """``old`` with its header rewritten by this conformbench (the current layout)."""
    header, body = old.read_text(encoding="utf-8").split("\n", 1)
    current = read_replay(old).header.model_dump_json()
    assert json.loads(current)["version"] == REPLAY_VERSION and header != current
    new.write_text(current + "\n" + body, encoding="utf-8")


def _scored(path: Path) -> dict[str, Any]:
    """The report of a rescore, less what names the file (its path, hash and header)."""
    report = json.loads(score_replays([path]).model_dump_json())
    assert len(report.pop("replays")) == 1
    return dict(report)


def test_there_is_a_fixture_of_every_older_layout() -> None:
    assert [p.stem for p in OLD] == ["v1-2026-11-29", "v1-2026-11-30", "v1-2026-12-06"]
    assert all(_header_line(p)["format"] == "conformbench.replay/1" and "version" not in _header_line(p) for p in OLD)


@pytest.mark.parametrize("path", OLD, ids=[p.stem for p in OLD])
def test_an_older_header_reads_as_the_current_layout(path: Path) -> None:
    raw = _header_line(path)["spec"]
    header = read_replay(path).header
    assert header.version == REPLAY_VERSION and header.format == "conformbench.replay"
    if "loop_stop" in raw["decoding"]:
        # what the header holds is what a report shows of it, key for key
        assert json.dumps(header.spec.as_recorded()) == json.dumps(raw)
        assert header.spec.decoding.loop_stop is True
    else:  # written before the loop stop existed: that run had none
        assert header.spec.decoding.loop_stop is False
        assert header.spec.as_recorded() == {**raw, "decoding": {**raw["decoding"], "loop_stop": False}}
    # a key the header left out reads as its default (think budgets, samples, beams...)
    assert header.spec.tasks[0].think_tokens is None and header.spec.decoding.samples == 1


@pytest.mark.parametrize("path", OLD, ids=[p.stem for p in OLD])
def test_an_older_header_rescores_as_the_current_layout(path: Path, tmp_path: Path) -> None:
    current = tmp_path / "replay.jsonl"
    _as_current(path, current)
    scored = _scored(path)
    assert scored["results"] and scored == _scored(current)


@pytest.mark.parametrize("name", ["v1-2026-11-30", "v1-2026-12-06"])
def test_a_version_1_replay_rescores_byte_for_byte(name: str) -> None:
    """``layouts/reports/NAME.md`` is the report.md the code before version 2
    rendered from the fixture (commit c3c4614); this code renders the same bytes
    (but for the verdict's words, rewritten by issue #58: a headline per comparison)."""
    from conformbench.reports.markdown import render_markdown

    golden = (LAYOUTS / "reports" / f"{name}.md").read_text(encoding="utf-8")
    assert render_markdown(score_replays([LAYOUTS / f"{name}.jsonl"])) == golden


def test_the_layout_before_version_2_gives_the_same_ledger_and_plot_on_the_cli(tmp_path: Path) -> None:
    """The ledger and the plot of a header of the last layout before version 2
    and of the same replay under the current header are the same bytes (the
    other report files name the file and quote its header)."""
    (path,) = [p for p in OLD if p.stem == "v1-2026-12-06"]
    current = tmp_path / "current" / "replay.jsonl"
    current.parent.mkdir()
    _as_current(path, current)
    for replay, out in ((path, tmp_path / "old"), (current, tmp_path / "new")):
        assert main(["score", str(replay), "--out", str(out), "--quiet"]) == 0
    assert (tmp_path / "old" / "ledger.csv").read_bytes() == (tmp_path / "new" / "ledger.csv").read_bytes()
    assert (tmp_path / "old" / "quadrants.svg").read_bytes() == (tmp_path / "new" / "quadrants.svg").read_bytes()


def test_a_new_replay_writes_the_current_layout_whole(tmp_path: Path) -> None:
    spec = RunSpec.model_validate({"models": [{"label": "m"}], "tasks": [{"name": "gsm8k"}]})
    path = tmp_path / "replay.jsonl"
    with ReplayWriter.create(path, ReplayHeader(run_id="r", created="c", conformbench_version="0",
                                                spec=spec.replay_spec())):
        pass
    line = _header_line(path)
    assert (line["format"], line["version"]) == ("conformbench.replay", REPLAY_VERSION)
    # every key, defaults included: no key is left for a later default to fill
    assert line["spec"]["decoding"] == {"max_tokens": None, "temperature": 0.0, "seed": 0, "loop_stop": True,
                                        "beams": 1, "attention": False, "mask_trace": False, "samples": 1,
                                        "max_rounds": None}
    assert line["spec"]["format_assertion"] is False and "think_stop" in line["spec"]["tasks"][0]
    assert read_replay(path).header.spec == spec.replay_spec()


def test_an_older_header_compares_equal_to_the_spec_it_was_run_with() -> None:
    """A resume compares whole specs, so a header that left a default out (or
    predates a key) is the same run as the spec that now writes that key."""
    (path,) = [p for p in OLD if p.stem == "v1-2026-11-30"]
    header = read_replay(path).header
    assert "think_tokens" not in _header_line(path)["spec"]["tasks"][0]
    rerun = RunSpec.model_validate({**_header_line(path)["spec"], "out": "elsewhere"})
    assert rerun.replay_dict() == header.spec.as_dict()


def test_a_newer_layout_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = json.loads(read_replay(OLD[-1]).header.model_dump_json())
    body = OLD[-1].read_text(encoding="utf-8").split("\n", 1)[1]
    future = tmp_path / "future.jsonl"
    future.write_text(json.dumps({**line, "version": REPLAY_VERSION + 1}) + "\n" + body, encoding="utf-8")
    words = (f"replay format {REPLAY_VERSION + 1} is newer than this conformbench reads ({REPLAY_VERSION}); "
             "upgrade")
    with pytest.raises(UsageError, match=rf"future.jsonl: {words.replace('(', '[(]').replace(')', '[)]')}"):
        read_replay(future)
    assert main(["score", str(future), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("bad", [{"format": "otherbench/1"}, {"version": 0}, {"version": "2"}, {"version": True}])
def test_a_header_of_no_known_layout_is_refused(tmp_path: Path, bad: dict[str, Any]) -> None:
    line = json.loads(read_replay(OLD[-1]).header.model_dump_json())
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({**line, **bad}) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match="bad.jsonl: replay format"):
        read_replay(path)


def test_every_shipped_replay_reads_its_header_key_for_key() -> None:
    """What scoring reports of a shipped header is the header line itself,
    so the shipped replays rescore to the reports they gave."""
    for name, path in shipped_replays().items():
        assert json.dumps(read_replay(path).header.spec.as_recorded()) == json.dumps(_header_line(path)["spec"]), name
