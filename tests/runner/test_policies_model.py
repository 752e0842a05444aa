"""The multi-round arms on the embedded model through the CLI: every repair
turn quotes errors python-jsonschema itself reports for the previous answer
(the same failing instance paths), no valid first answer gets a second
round, the terminal shows each arm's rates and mean calls, and ``score``
on the replay alone writes report.json byte for byte."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from conformbench.arms import FEEDBACK_ERRORS
from conformbench.cli.main import main
from conformbench.records.replay import GenerationRecord
from conformbench.records.replay_file import read_replay
from conformbench.tasks.extract import parse_json_output
from conformbench.tasks.gsm8k import ANSWER_SCHEMA
from conformbench.validator.schema_validator import json_pointer

_QUOTED = re.compile(r"^- at (\S+): (\w+): ", re.M)


def _quoted_paths(feedback: str) -> tuple[set[str], set[str]]:
    """(instance paths, keywords) a repair turn quotes."""
    found = _QUOTED.findall(feedback)
    return {"" if path == "(root)" else path for path, _ in found}, {kw for _, kw in found}


def check_repair_turns(gens: list[GenerationRecord]) -> int:
    """Check every repair round after the first against python-jsonschema;
    returns how many were checked."""
    rounds: dict[str, dict[int, GenerationRecord]] = {}
    for gen in gens:
        if gen.condition.arm == "repair":
            rounds.setdefault(gen.item_id, {})[gen.round] = gen
    checked = 0
    for by_round in rounds.values():
        for r in sorted(by_round)[1:]:
            previous, feedback = by_round[r - 1], by_round[r].prompt.messages[-1].content
            assert by_round[r].prompt.messages[-2].content == previous.text  # the earlier turn is kept
            paths, keywords = _quoted_paths(feedback)
            parsed = parse_json_output(previous.text, ANSWER_SCHEMA)
            if not parsed.ok:
                assert keywords == {"parse"}, feedback
            else:
                errors = list(Draft202012Validator(ANSWER_SCHEMA).iter_errors(parsed.value))
                theirs = {json_pointer(e.absolute_path) for e in errors}
                assert errors and paths <= theirs, (feedback, theirs)
                if len(errors) <= FEEDBACK_ERRORS:
                    assert paths == theirs
            checked += 1
    return checked


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_repair_resample_fallback_on_the_embedded_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["run", "--task", "gsm8k", "-n", "2", "--json-tokens", "48", "--max-rounds", "2",
                 "--arm", "prompt_only[answer],repair[answer],resample[answer],fallback[answer],constrained[answer]",
                 "--threads", "1", "--out", str(out)])
    assert code == 0
    captured = capsys.readouterr()
    terminal = captured.out + captured.err  # the summary goes to stderr, the --json summary to stdout
    for arm in ("repair[answer]", "resample[answer]", "fallback[answer]@llguidance"):
        line = next(x for x in terminal.splitlines() if x.strip().startswith(arm + " (N=2)"))
        assert "validity" in line and "accuracy" in line and "wrong-but-valid" in line and "mean calls" in line
    replay = read_replay(out / "replay.jsonl")
    assert replay.header.spec.decoding.max_rounds == 2
    first = {g.item_id: g for g in replay.generations if g.condition.arm == "prompt_only"}
    for gen in replay.generations:
        if gen.condition.arm in ("repair", "resample", "fallback") and gen.round == 0:
            assert gen.text == first[gen.item_id].text and gen.shared == "prompt_only[answer]"
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    arms = {a["key"]: a for a in report["results"][0]["arms"]}
    valid_first = {i for i, g in first.items() if arms and g.finish_reason == "stop"
                   and parse_json_output(g.text, ANSWER_SCHEMA).ok
                   and Draft202012Validator(ANSWER_SCHEMA).is_valid(parse_json_output(g.text, ANSWER_SCHEMA).value)}
    assert not [g for g in replay.generations if g.round > 0 and g.item_id in valid_first]
    check_repair_turns(replay.generations)
    again = tmp_path / "again"
    assert main(["score", str(out / "replay.jsonl"), "--out", str(again), "--quiet"]) == 0
    assert (again / "report.json").read_bytes() == (out / "report.json").read_bytes()


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(900)
def test_the_multi_round_arms_over_the_openai_backend(llama_server: str, tmp_path: Path) -> None:
    """The same arms against llama-cpp-python's OpenAI-compatible server:
    the repair conversation is sent as chat messages, fallback's grammar
    turn is the server's structured output, and the repair turns quote what
    python-jsonschema reports."""
    out = tmp_path / "out"
    code = main(["run", "--backend", "openai", "--base-url", llama_server, "--model", "smollm2",
                 "--task", "gsm8k", "-n", "2", "--json-tokens", "48", "--max-rounds", "2",
                 "--arm", "prompt_only[answer],repair[answer],fallback[answer],constrained[answer]",
                 "--out", str(out), "--quiet"])
    assert code == 0
    replay = read_replay(out / "replay.jsonl")
    assert {g.condition.arm for g in replay.generations} == {"prompt_only", "repair", "fallback", "constrained"}
    assert all(g.finish_reason != "error" for g in replay.generations)
    check_repair_turns(replay.generations)
    constrained = {g.item_id: g.text for g in replay.generations if g.condition.arm == "constrained"}
    for gen in replay.generations:
        if gen.condition.arm == "fallback" and gen.round == 1:
            assert gen.text == constrained[gen.item_id]  # the same request, generated once


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.timeout(1800)
def test_repair_in_the_concodeeval_generation_cells(tmp_path: Path) -> None:
    """repair in the ConCodeEval generation experiment (issue #42), YAML
    output: the feedback comes from the output format's own reading and the
    item's schema, asks for YAML, and rescoring reports the rounds."""
    from conformbench.formats.base import output_formats
    from conformbench.tasks.concodeeval.shots import object_schema

    out = tmp_path / "out"
    code = main(["run", "--task", "generation", "-n", "2", "--schema-format", "json", "--output-format", "yaml",
                 "--arm", "prompt_only[schema],repair[schema]", "--max-rounds", "2", "--max-tokens", "96",
                 "--threads", "1", "--out", str(out), "--quiet"])
    assert code == 0
    replay = read_replay(out / "replay.jsonl")
    schemas = {i.item.id: object_schema(i.item.input["schema"]) for i in replay.items}
    repairs = [g for g in replay.generations if g.condition.arm == "repair"]
    assert {g.round for g in repairs} == {0, 1}  # a 96-token budget fails some first answer
    by_item = {(g.item_id, g.round): g for g in repairs}
    for (item, rnd), gen in by_item.items():
        if rnd == 0:
            continue
        feedback = gen.prompt.messages[-1].content
        assert feedback.endswith("Reply with only the corrected YAML.")
        previous = by_item[(item, 0)]
        parsed = output_formats.get("yaml")().parse(previous.text, schemas[item])
        if parsed.ok and previous.finish_reason != "length":
            theirs = {json_pointer(e.absolute_path) for e in Draft202012Validator(schemas[item]).iter_errors(parsed.value)}
            assert _quoted_paths(feedback)[0] <= theirs, (feedback, theirs)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert any(a["key"] == "json->yaml/0shot/repair[schema]" for a in report["results"][0]["arms"])
