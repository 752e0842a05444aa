"""Loops stay linear and replays bounded (issue #49, defect 1): a repair
round quoted every earlier answer whole and each record stored its answer
whole, so a replay grew with the square of the rounds (a server answering
1,000,001 control characters made one item at --max-rounds 20 a 1.26 GB
replay, which score then refused) and, once linear, still with -n (~6 MB a
record: -n 200 at 3 rounds passed the 1 GiB read cap). A later round now
quotes an excerpt of each earlier answer (``records.rounds.answer_excerpt``)
and an answer over the parse limit is stored cut (``records.stored_text``:
both ends, its length and sha256), scored, resumed and replayed as the whole
answer was. Against a real HTTP server on 127.0.0.1 (misbehaving_endpoint.py)
that answers every request with 1,000,001 control characters, no model."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from misbehaving_endpoint import Endpoint

import conformbench
from conformbench.cli.main import main
from conformbench.formats.limits import DEFAULT_LIMITS
from conformbench.importers.outputs import import_outputs
from conformbench.records.items import TaskOptions
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay import GenerationRecord
from conformbench.records.replay_file import read_replay
from conformbench.records.rounds import ANSWER_EXCERPT_CHARS, TurnPlan, answer_excerpt
from conformbench.records.stored_text import STORE_LIMIT_CHARS, STORED_EDGE_CHARS, cut_for_storage, stored_answer
from conformbench.reports.rescore import loaded_replays
from conformbench.tasks.base import tasks
from conformbench.tasks.concodeeval.fence_reading import parse_answer
from conformbench.tasks.extract import parse_json_output

#: the answer the server sends: one character over the parse limit
SENT = "\x01" * 1_000_001
#: an answer stored cut, 6 bytes a character as JSON at worst (marker included)
TEXT_JSON_BYTES = 6 * (2 * STORED_EDGE_CHARS + 200)
#: a later round's growth per earlier round: its excerpt (as JSON), the
#: feedback and the message framing, with room to spare
ROUND_QUOTE_BYTES = 6 * (2 * ANSWER_EXCERPT_CHARS + 60) + 4_000


def _repair_run(tmp_path: Path, url: str, rounds: int) -> Path:
    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps({"question": "What is 1+1?", "answer": "2"}) + "\n", encoding="utf-8")
    conformbench.run({"models": [{"label": "m", "backend": "openai", "model": "x", "base_url": url,
                                  "max_retries": 0, "concurrency": 1}],
                      "tasks": [{"name": "custom", "n": 1, "dataset": str(data), "arms": ["repair[answer]"]}],
                      "decoding": {"max_rounds": rounds}, "out": str(tmp_path / "out")}, quiet=True)
    return tmp_path / "out" / "replay.jsonl"


def _linear_bound(rounds: int) -> int:
    """Every answer once, each round's prompt quoting every earlier one as an excerpt."""
    return rounds * TEXT_JSON_BYTES + rounds * rounds * ROUND_QUOTE_BYTES + 100_000


def _generations(replay: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in replay.read_text(encoding="utf-8").split("\n")
            if line and '"generation"' in line[:40]]


def test_an_excerpt_keeps_both_ends_and_says_what_was_cut() -> None:
    assert answer_excerpt("x" * 4000) == "x" * 4000
    cut = answer_excerpt("a" * 3000 + "b" * 3000)
    assert cut == "a" * 2000 + "\n[... 2000 characters cut ...]\n" + "b" * 2000
    plan = TurnPlan(Prompt((Message("user", "q"),)))
    for _ in range(20):
        plan = plan.followed_by("z" * 1_000_001, "again")
    assert sum(len(m.content) for m in plan.prompt.messages) < 20 * (2 * ANSWER_EXCERPT_CHARS + 100)


def test_repair_rounds_store_each_answer_once(tmp_path: Path) -> None:
    with Endpoint() as endpoint:
        replay = _repair_run(tmp_path, endpoint.base("controls"), rounds=3)
        largest_request = max(len(body) for body in endpoint.bodies)
    gens = _generations(replay)
    assert sorted(g.get("round", 0) for g in gens) == [0, 1, 2]
    for gen in gens:  # the answer cut in its text, every earlier one an excerpt in the prompt
        assert gen["text_chars"] == 1_000_001 and len(gen["text"]) < 2 * STORED_EDGE_CHARS + 200
        quoted = [m["content"] for m in gen["prompt"]["messages"] if m["role"] == "assistant"]
        assert len(quoted) == gen.get("round", 0)
        assert all("[... 996001 characters cut ...]" in q and len(q) < 4100 for q in quoted)
    assert replay.stat().st_size < _linear_bound(3)
    assert largest_request < 3 * ROUND_QUOTE_BYTES  # was every answer whole: 12 MB at round 2


@pytest.mark.long
def test_the_worst_case_the_caps_allow_stays_linear_and_readable(tmp_path: Path) -> None:
    """--max-rounds 20 (its cap), every answer over the parse limit in the
    costliest characters: the replay stays under 13 MB (1.26 GB before any
    bound, ~125 MB with answers stored whole), and score reads it back in a
    process that peaks under 1 GB."""
    with Endpoint() as endpoint:
        replay = _repair_run(tmp_path, endpoint.base("controls"), rounds=20)
    assert replay.stat().st_size < _linear_bound(20) < 13_000_000
    code = ("import sys, conformbench; conformbench.score(sys.argv[1], out=sys.argv[2]);"
            "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))")
    out = subprocess.run([sys.executable, "-c", code, str(replay), str(tmp_path / "scored")],
                         capture_output=True, text=True, timeout=300, check=True).stdout.split()
    assert int(out[-1]) * 1024 < 1024**3, f"peak RSS {int(out[-1]) // 1024} MB"
    assert (tmp_path / "scored" / "report.json").is_file()


def test_an_answer_over_the_parse_limit_is_stored_cut_and_read_as_the_whole() -> None:
    """Stored cut, an answer gets the whole one's reason from every reader
    (the size check counts the whole answer) and the whole one's excerpt."""
    stored, chars, sha256 = cut_for_storage(SENT)
    assert chars == len(SENT) and sha256 == hashlib.sha256(SENT.encode()).hexdigest()
    assert stored.startswith(SENT[:STORED_EDGE_CHARS]) and stored.endswith(SENT[-STORED_EDGE_CHARS:])
    assert f"992001 characters cut from an answer of 1000001 characters, sha256 {sha256}" in stored
    back = stored_answer(stored, chars, sha256)
    assert answer_excerpt(back) == answer_excerpt(SENT) and cut_for_storage(back) == (stored, chars, sha256)
    assert parse_json_output(back).error == parse_json_output(SENT).error == (
        f"answer is 1000001 characters, over the limit of {DEFAULT_LIMITS.max_chars}")
    assert STORE_LIMIT_CHARS == DEFAULT_LIMITS.max_chars and STORED_EDGE_CHARS >= ANSWER_EXCERPT_CHARS
    assert cut_for_storage("x" * STORE_LIMIT_CHARS) == ("x" * STORE_LIMIT_CHARS, None, None)


def _cli_run(url: str, out: Path) -> int:
    return main(["run", "--backend", "openai", "--base-url", url, "--model", "x", "--task", "gsm8k", "-n", "4",
                 "--arm", "unconstrained,repair[answer]", "--max-rounds", "3", "--out", str(out), "--quiet"])


def test_many_items_keep_each_record_bounded_scored_and_resumed_as_before(tmp_path: Path) -> None:
    """`run --backend openai` on 4 GSM8K items, a free arm and repair at 3
    rounds: every record stays under its bound, score gives each answer the
    verdict the whole answer gets from the same task (invalid, the same
    reason; no answer read from the free one), in a process that stays
    small, and the same command again generates nothing."""
    out = tmp_path / "out"
    with Endpoint() as endpoint:
        assert _cli_run(endpoint.base("controls"), out) == 0
        sent = len(endpoint.bodies)
        assert _cli_run(endpoint.base("controls"), out) == 0
        assert len(endpoint.bodies) == sent  # resumed: nothing new asked
    replay = out / "replay.jsonl"
    lines = [line for line in replay.read_text(encoding="utf-8").split("\n") if '"generation"' in line[:40]]
    assert len(lines) == 4 * (1 + 3)
    for line in lines:
        gen = json.loads(line)
        assert gen["text_chars"] == 1_000_001 and gen["text_sha256"] == hashlib.sha256(SENT.encode()).hexdigest()
        assert len(line.encode()) < TEXT_JSON_BYTES + gen.get("round", 0) * ROUND_QUOTE_BYTES + 20_000
    code = ("import sys, json, pathlib, conformbench; from conformbench.reports.rescore import loaded_replays;"
            "conformbench.score(sys.argv[1], out=sys.argv[2]); run = loaded_replays([pathlib.Path(sys.argv[1])]);"
            "print(json.dumps([[g.condition.arm, g.score.valid, g.score.correct, g.score.note] for t in run.tables"
            " for r in t.table.rows for g in (*r.earlier, r)]));"
            "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))")
    shown = subprocess.run([sys.executable, "-c", code, str(replay), str(tmp_path / "scored")], capture_output=True,
                           text=True, timeout=300, check=True).stdout.split("\n")
    task = tasks.get("gsm8k")(TaskOptions(n=4))
    item = task.items()[0]
    conditions = {g.condition for g in read_replay(replay).generations}
    whole = {c.arm: task.score(item, c, SENT, False) for c in conditions}
    scored = json.loads(shown[0])
    assert len(scored) == 4 * 4 and {arm for arm, *_ in scored} == {"unconstrained", "repair"}
    for arm, valid, correct, note in scored:
        assert (valid, correct, note) == (whole[arm].valid, whole[arm].correct, whole[arm].note)
    assert whole["repair"].note == f"answer is 1000001 characters, over the limit of {DEFAULT_LIMITS.max_chars}"
    assert int(shown[1]) * 1024 < 400 * 1024**2, f"peak RSS {int(shown[1]) // 1024} MB"


@pytest.mark.parametrize("fmt", ["json", "yaml", "xml"])
def test_a_cut_answer_that_continues_the_open_fence_reads_as_the_whole(fmt: str) -> None:
    """ConCodeEval reads an answer continuing its prompt's fence with a fence
    added: the size is checked first, so the count is the answer's own."""
    whole = "a: 1\n```\n" + "z" * 1_000_000
    assert parse_answer(fmt, stored_answer(*cut_for_storage(whole)), None) == parse_answer(fmt, whole, None)
    assert parse_answer(fmt, whole, None)[0].error == "answer is 1000009 characters, over the limit of 1000000"


def test_a_replayed_run_serves_a_cut_answer_as_the_whole(tmp_path: Path) -> None:
    """The replay backend serves a cut answer as the whole one: the later
    rounds' prompts (each quoting an excerpt) match, and the new replay
    stores what the first did."""
    with Endpoint() as endpoint:
        assert _cli_run(endpoint.base("controls"), tmp_path / "live") == 0
    first = read_replay(tmp_path / "live" / "replay.jsonl")
    conformbench.run({"models": [{"label": "again", "backend": "replay", "model": str(tmp_path / "live" / "replay.jsonl")}],
                      "tasks": [{"name": "gsm8k", "n": 4, "arms": ["unconstrained", "repair[answer]"]}],
                      "decoding": {"max_rounds": 3}, "out": str(tmp_path / "again")}, quiet=True)
    again = read_replay(tmp_path / "again" / "replay.jsonl")
    def stored(gens: list[GenerationRecord]) -> dict[tuple[str, str], tuple[object, ...]]:
        return {g.key[2:]: (g.prompt, g.text, g.text_chars, g.text_sha256, g.finish_reason) for g in gens}

    assert len(again.generations) == len(first.generations) == 16
    assert stored(again.generations) == stored(first.generations)
    assert all(g.text_chars == 1_000_001 for g in again.generations)


def test_a_run_killed_between_rounds_goes_on_as_the_whole_answers_would(tmp_path: Path) -> None:
    """Resumed after round 1, round 2's request quotes round 1's cut answer
    as the whole one (excerpt and verdict counted on 1,000,001 characters)."""
    out = tmp_path / "out"
    with Endpoint() as endpoint:
        assert _cli_run(endpoint.base("controls"), out) == 0
        whole_run = list(endpoint.bodies)
        replay = out / "replay.jsonl"
        kept = [line for line in replay.read_text(encoding="utf-8").split("\n") if '"round":2' not in line]
        replay.write_text("\n".join(kept), encoding="utf-8")
        sent = len(endpoint.bodies)
        assert _cli_run(endpoint.base("controls"), out) == 0
        again = [body for body in endpoint.bodies[sent:] if body]  # the chat requests
    assert len(again) == 4 and all(body in whole_run for body in again)
    assert all(b"996001 characters cut" in body and b"answer is 1000001 characters" in body for body in again)


#: the free step is the unconstrained arm's answer (a replayed run serves it from there)
ARMS = "unconstrained,reason_then_constrain[answer]"


# the packaging request quotes the whole free text: a 7 MB body, which aiohttp warns of
@pytest.mark.filterwarnings("ignore:Sending a large body:ResourceWarning")
def test_a_packaged_free_text_over_the_limit_is_stored_cut_too(tmp_path: Path) -> None:
    """reason_then_constrain quotes its free text in the packaging prompt and
    a server-constrained request records its body: both, and the free text,
    are stored cut (the marker gives the whole length and sha256); a rerun
    sends nothing and a replayed run finds every prompt."""
    argv = ["run", "--backend", "openai", "--model", "x", "--task", "gsm8k", "-n", "2", "--no-canary", "--engine", "server",
            "--dialect", "json_schema", "--arm", ARMS, "--quiet"]
    with Endpoint() as endpoint:
        url = ["--base-url", endpoint.base("controls")]
        assert main([*argv, *url, "--out", str(tmp_path / "out")]) == 0
        sent = len(endpoint.bodies)
        assert main([*argv, *url, "--out", str(tmp_path / "out")]) == 0 and len(endpoint.bodies) == sent
    replay = tmp_path / "out" / "replay.jsonl"
    lines = [line for line in replay.read_text(encoding="utf-8").split("\n") if '"generation"' in line[:40]]
    digest = hashlib.sha256(SENT.encode()).hexdigest()
    for line in lines:  # text, free text, the prompt quoting it, the body sent: each ~8,000 characters
        assert len(line.encode()) < 4 * TEXT_JSON_BYTES + 10_000
        gen = json.loads(line)
        if gen["condition"]["arm"] == "unconstrained":
            continue
        assert f"from an answer of 1000001 characters, sha256 {digest}" in gen["free_text"]
        assert gen["free_text"] in gen["prompt"]["messages"][1]["content"]
    assert main(["run", "--backend", "replay", "--model", str(replay), "--task", "gsm8k", "-n", "2", "--no-canary", "--engine", "server",
                 "--arm", ARMS, "--out", str(tmp_path / "again")]) == 0
    again = read_replay(tmp_path / "again" / "replay.jsonl").generations
    assert len(again) == 4 and all(g.text_chars == 1_000_001 and g.finish_reason == "stop" for g in again)


def test_an_imported_answer_over_the_limit_is_stored_cut(tmp_path: Path) -> None:
    """Every record written goes through the same cut (``ReplayWriter``): an
    outputs file's answer over the limit too, scored as the whole."""
    outputs = tmp_path / "outputs.jsonl"
    ids = [item.id for item in tasks.get("gsm8k")(TaskOptions(n=2)).items()]
    outputs.write_text("".join(json.dumps({"item_id": i, "text": SENT}) + "\n" for i in ids), encoding="utf-8")
    summary = import_outputs(outputs, "gsm8k", tmp_path / "imported", contract="answer", model="m")
    gens = read_replay(summary.replay).generations
    assert [g.text_chars for g in gens] == [1_000_001, 1_000_001] and summary.replay.stat().st_size < 150_000
    run = loaded_replays([summary.replay])
    notes = {r.score.note for t in run.tables for r in t.table.rows}
    assert notes == {f"answer is 1000001 characters, over the limit of {DEFAULT_LIMITS.max_chars}"}
