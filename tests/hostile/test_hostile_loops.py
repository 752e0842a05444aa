"""Loops stay linear (issue #49, defect 1): a repair round quoted every
earlier answer whole and each record stores its prompt, so a replay grew
with the square of the rounds (a server answering 1,000,001 control
characters made one item at --max-rounds 20 a 1.26 GB replay, which score
then refused). A later round now quotes an excerpt of each earlier answer
(``records.rounds.answer_excerpt``): each answer is stored once in full.
Against a real HTTP server on 127.0.0.1 (misbehaving_endpoint.py) that
answers every request with the longest text stored whole, no model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from misbehaving_endpoint import Endpoint

import conformbench
from conformbench.records.prompt import Message, Prompt
from conformbench.records.rounds import ANSWER_EXCERPT_CHARS, TurnPlan, answer_excerpt

#: the stored text at its cap (1,000,001 characters), 6 bytes each as JSON
TEXT_JSON_BYTES = 6 * 1_000_001
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
    return rounds * TEXT_JSON_BYTES + rounds * rounds * ROUND_QUOTE_BYTES + 1_000_000


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
    gens = [json.loads(line) for line in replay.read_text(encoding="utf-8").split("\n")
            if line and '"generation"' in line[:40]]
    assert sorted(g.get("round", 0) for g in gens) == [0, 1, 2]
    for gen in gens:  # the answer whole in its text, every earlier one an excerpt in the prompt
        assert len(gen["text"]) == 1_000_001
        quoted = [m["content"] for m in gen["prompt"]["messages"] if m["role"] == "assistant"]
        assert len(quoted) == gen.get("round", 0)
        assert all("[... 996001 characters cut ...]" in q and len(q) < 4100 for q in quoted)
    assert replay.stat().st_size < _linear_bound(3)
    assert largest_request < 3 * ROUND_QUOTE_BYTES  # was every answer whole: 12 MB at round 2


@pytest.mark.long
def test_the_worst_case_the_caps_allow_stays_linear_and_readable(tmp_path: Path) -> None:
    """--max-rounds 20 (its cap), every answer at the stored-text cap in the
    costliest characters: the replay is ~125 MB (1.26 GB before), and score
    reads it back in a process that peaks under 1 GB."""
    with Endpoint() as endpoint:
        replay = _repair_run(tmp_path, endpoint.base("controls"), rounds=20)
    assert replay.stat().st_size < _linear_bound(20) < 150_000_000
    code = ("import sys, conformbench; conformbench.score(sys.argv[1], out=sys.argv[2]);"
            "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))")
    out = subprocess.run([sys.executable, "-c", code, str(replay), str(tmp_path / "scored")],
                         capture_output=True, text=True, timeout=300, check=True).stdout.split()
    assert int(out[-1]) * 1024 < 1024**3, f"peak RSS {int(out[-1]) // 1024} MB"
    assert (tmp_path / "scored" / "report.json").is_file()
