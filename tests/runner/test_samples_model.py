"""Sampling beside greedy, live: ``--samples 3 --temperature 0.8`` on the
embedded SmolLM2 through llama.cpp records 3 generations per item and
condition, each seeded with the run's seed + its sample (a resume redoes a
cut sample to the same text), and the report gives pass@k, all@k and
per-item agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import conformbench
from conformbench.records.replay_file import REPLAY_NAME

pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.timeout(600)]


def test_three_samples_at_temperature_0_8_live(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = conformbench.run(tasks=["gsm8k"], n=2, arms=["prompt_only[answer]", "constrained[answer]"],
                            samples=3, temperature=0.8, decode_seed=5, threads=1, json_tokens=96,
                            out=out, quiet=True)
    records = [json.loads(line) for line in (out / REPLAY_NAME).read_text(encoding="utf-8").splitlines()]
    assert records[0]["spec"]["decoding"]["samples"] == 3
    gens = [r for r in records if r["kind"] == "generation"]
    cells = {(g["item_id"], g["condition"]["arm"]) for g in gens}
    assert len(cells) == 4 and len(gens) == 12
    for item, arm in cells:
        mine = [g for g in gens if (g["item_id"], g["condition"]["arm"]) == (item, arm)]
        assert sorted((g.get("sample", 0), g.get("seed", 5)) for g in mine) == [(0, 5), (1, 6), (2, 7)]
    # sampling at 0.8 with three seeds: the free-form answers of an item differ
    prompt_only = [g["text"] for g in gens if g["condition"]["arm"] == "prompt_only"]
    assert len(set(prompt_only)) > 2
    (result,) = done.run.results
    (section,) = [s for s in result.sections if s.name == "sampling"]
    for cond in section.data["conditions"]:
        assert cond["n"] == 2
        for metric in cond["metrics"]:
            assert len(metric["pass_at"]) == len(metric["all_at"]) == 3
            assert 0 <= metric["agreement"]["rate"] <= 1
            rates = [r["rate"] for r in metric["pass_at"]]
            assert rates == sorted(rates)  # pass@k never falls with k
    grammar = next(c for c in section.data["conditions"] if c["key"].startswith("constrained"))
    validity = next(m for m in grammar["metrics"] if m["metric"] == "validity")
    assert validity["mean"]["rate"] == 1.0  # the grammar holds in every sample
    headline = "\n".join(done.headline())
    assert "sampling: 3 samples per item and condition" in headline and "pass@3" in headline
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Sampling: pass@k, all@k and per-item agreement" in report and "all 3 agree" in report
    # a resumed run redoes the cut samples with their own seeds: the same texts
    path = out / REPLAY_NAME
    lines = path.read_bytes().splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if b'"kind":"generation"' in line)
    path.write_bytes(b"".join(lines[:last - 1]))
    again = conformbench.run(tasks=["gsm8k"], n=2, arms=["prompt_only[answer]", "constrained[answer]"],
                             samples=3, temperature=0.8, decode_seed=5, threads=1, json_tokens=96,
                             out=out, quiet=True)
    assert again.generation is not None and again.generation.generated == 2
    redone = [json.loads(line) for line in path.read_bytes().splitlines()[last - 1:]]
    assert [(g["text"], g.get("sample"), g.get("seed")) for g in redone if g["kind"] == "generation"] == [
        (g["text"], g.get("sample"), g.get("seed")) for g in gens[-2:]]
    print("\n".join(line for line in done.headline() if line.startswith(("sampling", "  constrained",
                                                                        "  prompt_only"))))
