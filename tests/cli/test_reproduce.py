"""``conformbench reproduce REPLAY``: rerun a replay's spec here and compare.

The comparison itself is checked on a shipped replay against a copy with a
known change (no model); the command end to end reruns a small live spec
on the embedded model, where the same build, CPU and threads must give
every text again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench import api
from conformbench.cli.main import main
from conformbench.reports.rescore import compare_rerun
from conformbench.runner.shipped import shipped_replay
from conformbench.scoring.reproduce import reproduction_lines


def _first_items(keep: int, out: Path, flip: int = 0) -> Path:
    """The shipped validation replay cut to ``keep`` items; the json->json
    answers of the first ``flip`` of them turned round (yes <-> no)."""
    kept: set[str] = set()
    lines, flipped = [], 0
    for line in shipped_replay("concodeeval-validation").read_text(encoding="utf-8").split("\n"):
        if not line:
            continue
        rec = json.loads(line)
        if rec["kind"] == "item" and len(kept) < keep:
            kept.add(rec["item"]["id"])
        elif rec["kind"] == "item" or (rec["kind"] == "generation" and rec["item_id"] not in kept):
            continue
        if (rec["kind"] == "generation" and flipped < flip and rec["condition"]["schema_format"] == "json"
                and rec["condition"]["output_format"] == "json"):
            rec["text"] = "Yes." if rec["text"].strip().lower().startswith("no") else "No."
            flipped += 1
            line = json.dumps(rec)
        lines.append(line)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_the_comparison_counts_identical_texts_flips_and_shifts(tmp_path: Path) -> None:
    published = _first_items(4, tmp_path / "published.jsonl")
    rerun = _first_items(4, tmp_path / "rerun.jsonl", flip=2)
    done = compare_rerun(published, rerun, 0.1)
    assert done.paired == 60 and done.identical == 58 and done.unmatched == 0
    assert len(done.flips) == 2 and all(f.condition == "json->json/0shot/unconstrained" for f in done.flips)
    assert {(f.published, f.rerun) for f in done.flips} <= {(True, False), (False, True)}
    # neither copy records its build (the shipped replay predates it): said, not hidden
    assert len(done.builds) == 1 and "record(s) no build" in done.builds[0]
    lines = reproduction_lines(done)
    assert lines[0].startswith("reproduce: 58/60 answers have the identical text (96.7%)")
    assert "  verdicts flipped: 2" in lines
    shift = next(line for line in lines if "json->json/0shot/unconstrained: Val Acc" in line)
    assert "(N=4," in shift and "shift" in shift


def test_a_bad_n_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "concodeeval-validation", "--n", "0"]) == 2
    assert "conformbench: error:" in capsys.readouterr().err


@pytest.mark.long
@pytest.mark.slow
def test_a_live_replay_reruns_to_the_same_texts_on_the_same_build(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    spec = {"models": [{"label": "m", "backend": "llamacpp", "threads": 1}],
            "tasks": [{"name": "validation", "n": 1, "schema_formats": ["json"], "output_formats": ["json"],
                       "arms": ["unconstrained"], "max_tokens": 24}],
            "out": str(tmp_path / "first"), "quiet": True}
    first = api.run(spec)
    header = json.loads((tmp_path / "first" / "replay.jsonl").read_text().split("\n")[0])
    assert header["build"]["llama_cpp"]["system_info"] and header["build"]["models"]["m"]["threads"] == 1
    assert first.generation is not None
    argv = ["reproduce", str(tmp_path / "first" / "replay.jsonl"), "--out", str(tmp_path / "again"), "--quiet"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "reproduce: 2/2 answers have the identical text (100.0%)" in out
    assert "same build, CPU features and threads as recorded" in out and "verdicts flipped: 0" in out
    saved = json.loads((tmp_path / "again" / "reproduce.json").read_text())
    assert saved["identical"] == saved["paired"] == 2 and saved["builds"] == []
