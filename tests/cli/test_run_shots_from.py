"""``conformbench run --shots-from REPLAY`` end to end on the scripted
backend: a zero-shot generation run, then a 3-shot run whose shots are
picked from the first run's errors, then scoring without the first replay."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
import runfakes  # noqa: F401 - registers the fake backend

from conformbench.cli.main import main
from conformbench.records.replay_file import read_replay
from conformbench.schemas.build import BuildOptions, build_dataset
from conformbench.tasks.concodeeval.error_profile import read_profile

#: the scripted model's answer to every ConCodeEval prompt: an object with
#: one member, wrong for most schemas (root type, required, closed objects...)
REPLY = '```json\\n{\\"x\\": 1}\\n```'


def _spec(tmp_path: Path, dataset: Path) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(
        "canary = false\n[decoding]\nmax_tokens = 64\n"
        f'[[models]]\nlabel = "m"\nbackend = "fake"\nextra = {{ reply = "{REPLY}" }}\n'
        f'[[tasks]]\nname = "generation"\ndataset = "{dataset}"\narms = ["prompt_only"]\n'
        'schema_formats = ["json"]\noutput_formats = ["json"]\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.long
def test_shots_from_a_zero_shot_run(tmp_path: Path) -> None:
    dataset = tmp_path / "dataset"
    build_dataset(BuildOptions(out=dataset, n=8, seed=3))
    spec = str(_spec(tmp_path, dataset))
    zero, few = tmp_path / "zero", tmp_path / "few"
    assert main(["run", "--spec", spec, "--out", str(zero), "--quiet"]) == 0
    source = zero / "replay.jsonl"
    profile = read_profile(source, "generation")
    assert profile.failures > 0 and profile.keywords
    assert main(["run", "--spec", spec, "--out", str(few), "--quiet", "--shots", "3",
                 "--shots-from", str(source)]) == 0
    replay = read_replay(few / "replay.jsonl")
    assert replay.header.spec.tasks[0].shots_from == str(source)
    top = {k for k, _ in profile.top_keywords(5)}
    for rec in replay.items:
        item = rec.item
        assert item.meta["shot_selection"] == "zero-shot errors"
        reasons = [str(r) for r in item.meta["shot_reasons"]]  # type: ignore[union-attr]
        assert len(reasons) == 3 and item.input["schema_id"] not in item.meta["shot_ids"]  # type: ignore[operator]
        assert reasons[0].removeprefix("shows ").split(":")[0] in top
    # the prompts show the chosen shots' schemas
    for gen in replay.generations:
        item = next(r.item for r in replay.items if r.item.id == gen.item_id)
        text = gen.prompt.messages[-1].content
        for shot in item.input["shots"]:  # type: ignore[union-attr]
            assert shot["renderings"]["json"] in text  # type: ignore[index]
    # scoring reads the few-shot replay alone: the error replay may be gone
    source.unlink()
    assert main(["score", str(few / "replay.jsonl"), "--out", str(tmp_path / "report"), "--quiet"]) == 0
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["results"][0]["task_info"]["shots_from"] == str(source)
