"""Crafted replays read as data and checked against their own header
(issue #49, defects 5, 6, 11, 12, 13): every record's sample, round and
item is within the header's spec, an item id means one item across every
replay merged, and a number past what the reader takes is one line and
exit 2 — never a traceback, an allocation or a silently changed score."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformbench.cli.main import main
from conformbench.files import shipped_data

ROWS = 3  # items (and their generations) kept from the shipped gsm8k replay


def _records() -> list[dict[str, Any]]:
    """The header, model, first items and their first generations of the
    shipped gsm8k replay (a real run's records, one condition)."""
    lines = shipped_data("replays/gsm8k.jsonl").read_text(encoding="utf-8").split("\n")
    recs = [json.loads(line) for line in lines if line]
    items = [r for r in recs if r["kind"] == "item"][:ROWS]
    ids = {r["item"]["id"] for r in items}
    cond = next(r["condition"] for r in recs if r["kind"] == "generation")
    gens = [r for r in recs if r["kind"] == "generation" and r["item_id"] in ids and r["condition"] == cond]
    return [recs[0], recs[1], *items, *gens]


def _write(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def _score(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["score", "--quiet", *args])
    err = capsys.readouterr().err
    return code, err


def _one_line_refusal(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("conformbench: error:"), err
    for word in words:
        assert word in lines[0], err


def _gens(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in recs if r["kind"] == "generation"]


def test_the_base_replay_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replay = _write(tmp_path / "a" / "replay.jsonl", _records())
    code, err = _score(capsys, str(replay), "--out", str(tmp_path / "r"))
    assert code == 0, err


@pytest.mark.parametrize("sample", [1, 10**12])
def test_a_sample_beyond_the_header_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               sample: int) -> None:
    """Defect 11: ``sample: 10**12`` made score exhaust memory; the header
    draws one sample, so any sample past 0 is refused before scoring."""
    recs = _records()
    extra = dict(_gens(recs)[0], sample=sample, seed=sample)
    replay = _write(tmp_path / "replay.jsonl", [*recs, extra])
    _one_line_refusal(*_score(capsys, str(replay), "--out", str(tmp_path / "r")), "sample")


def test_a_huge_sample_stays_small_in_memory(tmp_path: Path) -> None:
    """The 10**12 sample in a child under a 3 GiB address-space limit:
    one line and exit 2, no MemoryError, and the child's own peak RSS under
    1 GiB. Read as VmHWM, the high-water mark of the child's own address
    space: getrusage's ru_maxrss is no measure here, since subprocess starts
    the child with vfork and Linux carries the parent's peak (a full pytest
    run with models loaded: 1.4 GB) into the child's ru_maxrss at exec."""
    recs = _records()
    replay = _write(tmp_path / "replay.jsonl", [*recs, dict(_gens(recs)[0], sample=10**12)])
    code = ("import resource,sys;resource.setrlimit(resource.RLIMIT_AS,(3<<30,3<<30));"
            "from conformbench.cli.main import main;"
            f"code=main(['score','--quiet',{str(replay)!r},'--out',{str(tmp_path / 'r')!r}]);"
            "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')));"
            "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "MemoryError" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert int(done.stdout.split()[-1]) < 1 << 20  # KiB: under 1 GiB


@pytest.mark.parametrize("round_", [1, 10**12])
def test_a_round_on_a_one_answer_arm_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                round_: int) -> None:
    """Defect 12: a later round on prompt_only became the item's answer."""
    recs = _records()
    first = _gens(recs)[0]
    later = dict(first, round=round_, text='{{"reasoning": "", "answer": {}}}'.format(json.dumps(
        next(r for r in recs if r["kind"] == "item")["item"]["target"])))
    replay = _write(tmp_path / "replay.jsonl", [*recs, later])
    _one_line_refusal(*_score(capsys, str(replay), "--out", str(tmp_path / "r")), "round")


def _multi_round(recs: list[dict[str, Any]], rounds: int) -> list[dict[str, Any]]:
    """The records as a run of the multi-round arm ``repair`` at ``rounds``."""
    header = json.loads(json.dumps(recs[0]))
    header["spec"]["decoding"]["max_rounds"] = rounds
    header["spec"]["tasks"][0]["arms"] = ["repair[answer]"]
    gens = [dict(g, condition=dict(g["condition"], arm="repair")) for g in _gens(recs)]
    return [header, *[r for r in recs if r["kind"] in ("model", "item")], *gens]


def test_a_round_past_max_rounds_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = _multi_round(_records(), 2)
    gens = _gens(recs)
    replay = _write(tmp_path / "replay.jsonl", [*recs, dict(gens[0], round=1), dict(gens[0], round=2)])
    _one_line_refusal(*_score(capsys, str(replay), "--out", str(tmp_path / "r")), "at most 2 rounds")


def test_rounds_without_a_first_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = _multi_round(_records(), 3)
    gens = _gens(recs)
    others = [r for r in recs if r is not gens[0]]
    replay = _write(tmp_path / "replay.jsonl", [*others, dict(gens[0], round=1)])
    _one_line_refusal(*_score(capsys, str(replay), "--out", str(tmp_path / "r")), "no round 1")


def test_an_item_repeated_with_another_target_is_refused(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    recs = _records()
    item = next(r for r in recs if r["kind"] == "item")
    twin = {**item, "item": {**item["item"], "target": 12345}}
    replay = _write(tmp_path / "replay.jsonl", [*recs, twin])
    _one_line_refusal(*_score(capsys, str(replay), "--out", str(tmp_path / "r")), "recorded twice")


def test_an_item_repeated_unchanged_is_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = _records()
    item = next(r for r in recs if r["kind"] == "item")
    replay = _write(tmp_path / "replay.jsonl", [*recs, item])
    assert _score(capsys, str(replay), "--out", str(tmp_path / "r"))[0] == 0


@pytest.mark.parametrize("field", ["question", "target", "none"])
def test_score_a_b_compares_the_items_of_ids_merged(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    field: str) -> None:
    """Defect 5: B's right answers were scored against A's other questions
    of the same ids. A answers one arm, B another (so no generation key
    collides) over items of the same ids but another question or target."""
    recs = _records()
    gens = _gens(recs)
    changed = []
    for rec in recs[: 2 + ROWS]:
        if rec["kind"] == "item" and field != "none":
            item = dict(rec["item"])
            if field == "target":
                item["target"] = 999999
            else:
                item["input"] = {**item["input"], "question": "What is 999999 + 0?"}
            rec = {**rec, "item": item}
        changed.append(rec)
    other = [dict(g, condition=dict(g["condition"], arm="prompt_only", contract="answer")) for g in gens]
    a = _write(tmp_path / "a" / "replay.jsonl", recs)
    b = _write(tmp_path / "b" / "replay.jsonl", [*changed, *other])
    code, err = _score(capsys, str(a), str(b), "--out", str(tmp_path / "r"))
    if field == "none":
        assert code == 0, err
    else:
        _one_line_refusal(code, err, "not the item")


@pytest.mark.parametrize("where", ["target", "completion_tokens", "header", "sample", "round"])
def test_a_5000_digit_integer_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          where: str) -> None:
    """Defect 6: past Python's int-string limit json.loads raises ValueError."""
    recs = _records()
    lines = [json.dumps(r) for r in recs]
    big = "9" * 5000
    if where == "target":
        lines[2] = lines[2].replace('"target": ', f'"target": {big}, "x": ', 1)
    elif where == "header":
        lines[0] = lines[0].replace('"seed": 0', f'"seed": {big}', 1)
    else:
        gen = _gens(recs)[0]
        lines.append(json.dumps(gen)[:-1] + f', "{where}": {big}}}')
    replay = tmp_path / "replay.jsonl"
    replay.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _one_line_refusal(*_score(capsys, str(replay), "--out", str(tmp_path / "r")))


BIG = "9" * 5000


def _entry(tmp_path: Path, which: str) -> list[str]:
    """A command reading a 5000-digit integer through one JSON or TOML entry point."""
    if which == "spec":
        spec = tmp_path / "spec.toml"
        spec.write_text(f'[[tasks]]\nname = "gsm8k"\nn = {BIG}\n', encoding="utf-8")
        return ["run", "--spec", str(spec), "--out", str(tmp_path / "o")]
    if which == "schema":
        schema = tmp_path / "schema.json"
        schema.write_text(f'{{"type": "integer", "maximum": {BIG}}}', encoding="utf-8")
        return ["validate", str(schema), str(schema)]
    if which == "outputs":
        outputs = tmp_path / "outputs.jsonl"
        outputs.write_text(f'{{"item_id": "x", "text": "", "completion_tokens": {BIG}}}\n', encoding="utf-8")
        return ["import", "outputs", str(outputs), "--task", "gsm8k", "--out", str(tmp_path / "o")]
    raise AssertionError(which)


@pytest.mark.parametrize("which", ["spec", "schema", "outputs"])
def test_a_5000_digit_integer_in_every_entry_point(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   which: str) -> None:
    code = main(_entry(tmp_path, which))
    _one_line_refusal(code, capsys.readouterr().err, "digits")


def test_a_5000_digit_integer_in_dataset_build_schemas_is_an_exclusion(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``dataset build --schemas``: the schema is left out with its reason
    (a recorded exclusion), the others built; never a traceback."""
    folder = tmp_path / "schemas"
    folder.mkdir()
    (folder / "big.json").write_text(f'{{"type": "integer", "maximum": {BIG}}}', encoding="utf-8")
    (folder / "ok.json").write_text('{"type": "integer", "maximum": 5}', encoding="utf-8")
    code = main(["dataset", "build", "--schemas", str(folder), "--out", str(tmp_path / "d")])
    err = capsys.readouterr().err
    assert code in (0, 2), err
    assert "Traceback" not in err
    if code == 0:
        excluded = (tmp_path / "d" / "excluded.json").read_text(encoding="utf-8")
        assert "big" in excluded and "digits" in excluded


_STEP = {"prompt_tokens": 3, "completion_tokens": 5, "seconds": 1.0, "finish_reason": "stop"}


@pytest.mark.parametrize(("where", "value", "named"), [
    ("step", {**_STEP, "completion_tokens": -5, "seconds": math.nan}, "step.completion_tokens"),
    ("step", {**_STEP, "seconds": math.nan}, "step.seconds"),
    ("step", {**_STEP, "seconds": math.inf}, "step.seconds"),
    ("step", {**_STEP, "seconds": 1e308}, "step.seconds"),
    ("step", {**_STEP, "prompt_tokens": 10**30}, "step.prompt_tokens"),
    ("step", {**_STEP, "finish_reason": "excluded"}, "step.finish_reason"),
    ("step", {**_STEP, "prompt_tokens": {"a": [[[1]]] * 1000}}, "step.prompt_tokens"),
    ("completion_tokens", -5, "completion_tokens"),
    ("prompt_tokens", 10**30, "prompt_tokens"),
    ("seconds", math.nan, "seconds"),
    ("compile_seconds", -math.inf, "compile_seconds"),
])
def test_a_cost_past_what_a_run_records_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    where: str, value: object, named: str) -> None:
    """A free step's cost (``GenerationRecord.step``) and a generation's own
    tokens and seconds are non-negative, under 2**63 (seconds: finite, under
    1e18) and the step's finish reason one a call ends with: a negative
    count, a NaN (which every gate's comparison passes) or a huge number is
    refused in one line naming the field, never scored as a nonsense cost."""
    recs = _records()
    bad = dict(_gens(recs)[0], **{where: value})
    replay = _write(tmp_path / "replay.jsonl", [*recs, bad])
    code, err = _score(capsys, str(replay), "--out", str(tmp_path / "r"))
    _one_line_refusal(code, err, named, f"{replay}:{len(recs) + 1}")
    assert "ReplayHeader" not in err  # the generation's own field, not the first union member's mismatch


def test_a_step_cost_without_its_free_step_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``step`` is the cost of the free step in ``free_text``: on a record
    without one it would be a cost of nothing (the runner never writes it)."""
    recs = _records()
    gen = _gens(recs)[0]
    assert gen.get("free_text") is None
    replay = _write(tmp_path / "replay.jsonl", [*recs, dict(gen, step=_STEP)])
    _one_line_refusal(*_score(capsys, str(replay), "--out", str(tmp_path / "r")), "step", "free_text")
    with_text = dict(gen, step=_STEP, free_text="the free step's text")
    replay = _write(tmp_path / "ok" / "replay.jsonl", [*recs[:-len(_gens(recs))], with_text])
    assert _score(capsys, str(replay), "--out", str(tmp_path / "r2"))[0] == 0
