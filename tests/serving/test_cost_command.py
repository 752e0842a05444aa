"""``engines cost`` end to end against a real streaming HTTP server on
127.0.0.1 (tests/cost_server.py: a scripted model, so each server
behaviour can be shown on demand): the files it writes, resuming, the gate,
and one line and exit 2 for each way a server can fail it."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from cost_server import CostServer

from conformbench.cli.main import main
from conformbench.serving.journal import JOURNAL_NAME


@pytest.fixture()
def server() -> Iterator[CostServer]:
    with CostServer() as s:
        yield s


def _cost(url: str, out: Path, *extra: str) -> int:
    return main(["engines", "cost", "--base-url", url, "--concurrency", "1,2", "-n", "3", "--repeats", "2",
                 "--max-tokens", "16", "--timeout", "5", "--out", str(out), *extra])


def _journal(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / JOURNAL_NAME).read_text().splitlines()]


def test_cost_writes_the_report_from_what_it_measured(server: CostServer, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cost"
    assert _cost(server.base_url, out, "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    report = json.loads((out / "report.json").read_text())
    assert summary["complete"] and report["complete"]
    assert {(a["concurrency"], a["arm"]) for a in report["arms"]} == {
        (c, arm) for c in (1, 2) for arm in ("off", "warm", "cold")}
    # the scripted model writes prose off and the schema's instance on: the validator tells them apart
    for c in report["comparisons"]:
        assert (c["validity_on"]["k"], c["validity_on"]["n"], c["validity_off"]["k"]) == (6, 6, 0)
        assert c["pairs"]["only_on_valid"] == 6 and len(c["tpot_ratio"]["per_repeat"]) == 2
    rows = [r for r in _journal(out) if r.get("kind") == "request"]
    assert len(rows) == 2 * 2 * 3 * 3  # repeats x levels x arms x prompts
    by_arm = {a["arm"] + str(a["concurrency"]): a for a in report["arms"]}
    usage = sum(r["usage"]["completion_tokens"] for r in rows if r["arm"] == "off" and r["concurrency"] == 1)
    assert by_arm["off1"]["output_tokens"] == usage and by_arm["off1"]["tokens_from"] == "usage"
    # warm: each schema as it is; cold: every request's schema its own
    constrained = [b["response_format"]["json_schema"]["schema"] for b in server.streamed if "response_format" in b]
    comments = [s["$comment"] for s in constrained if "$comment" in s]
    assert len(comments) == len(set(comments)) == 2 * 2 * 3  # cold: repeats x levels x prompts, all distinct
    plain = [s for s in constrained if "$comment" not in s]
    assert len(plain) == 3 + 2 * 2 * 3 and len({json.dumps(s) for s in plain}) == 3  # warm-up, then warm
    assert (out / "latency.svg").read_text().startswith("<svg") and "TPOT p50" in (out / "latency.svg").read_text()
    assert "Cost and benefit at a glance" in (out / "report.md").read_text()


def test_rerunning_resumes_and_a_cut_batch_is_measured_again(server: CostServer, tmp_path: Path) -> None:
    out = tmp_path / "cost"
    assert _cost(server.base_url, out) == 0
    sent = len(server.streamed)
    assert _cost(server.base_url, out) == 0
    assert len(server.streamed) == sent  # every batch kept: nothing streamed again
    rows = _journal(out)
    # as a kill would leave it: the last batch's row gone, one of its requests torn
    (out / JOURNAL_NAME).write_text("".join(json.dumps(r) + "\n" for r in rows[:-2]) + json.dumps(rows[-2])[:9])
    assert _cost(server.base_url, out) == 0
    assert len(server.streamed) == sent + 3  # that batch alone, whole
    assert len([r for r in _journal(out) if r.get("kind") == "request"]) == len(
        [r for r in rows if r.get("kind") == "request"])


def test_a_journal_of_other_settings_is_refused(server: CostServer, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cost"
    assert _cost(server.base_url, out) == 0
    assert _cost(server.base_url, out, "--seed", "5") == 2
    assert "other settings" in capsys.readouterr().err


def test_the_gate_trips_with_exit_1(server: CostServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cost"
    assert _cost(server.base_url, out, "--fail-if", "validity_on < 0.5") == 0
    assert _cost(server.base_url, out, "--fail-if", "validity_off[c1/*] < 0.5") == 1
    assert "gate tripped: validity_off[c1/*] < 0.5: c1/warm = 0" in capsys.readouterr().err
    assert _cost(server.base_url, out, "--fail-if", "tpot_ratoi > 1.2") == 2
    assert "did you mean 'tpot_ratio'" in capsys.readouterr().err


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1, errors
    return errors[0]


def test_a_url_nothing_answers_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert _cost(f"http://127.0.0.1:{port}/v1", tmp_path / "cost") == 2
    assert "cannot reach http://127.0.0.1" in _one_line_error(capsys)


@pytest.mark.parametrize(("behaviour", "said"), [
    ("stall", "Timeout: no text within 1 s"),
    ("refuse", "HTTP 400: schema not supported"),
    ("silent", "the server did not stream"),
])
def test_a_server_failing_the_grammar_arm_keeps_what_was_measured(
        behaviour: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cost"
    with CostServer(behaviour) as server:
        code = main(["engines", "cost", "--base-url", server.base_url, "--concurrency", "1", "-n", "2",
                     "--repeats", "1", "--timeout", "1", "--out", str(out)])
    assert code == 2
    line = _one_line_error(capsys)
    assert said in line and "kept 1 finished batches" in line
    report = json.loads((out / "report.json").read_text())
    assert not report["complete"] and [a["arm"] for a in report["arms"]] == ["off"]


def test_poisson_arrivals_send_each_request_at_its_time(server: CostServer, tmp_path: Path) -> None:
    out = tmp_path / "cost"
    assert _cost(server.base_url, out, "--rate", "40", "--cache", "cold") == 0
    rows = [r for r in _journal(out) if r.get("kind") == "request"]
    offsets = sorted(float(r["offset_s"]) for r in rows if r["repeat"] == 0 and r["concurrency"] == 2
                     and r["arm"] == "off")
    assert offsets[0] == 0.0 and offsets[-1] > 0  # seeded exponential gaps, not all at once
    assert all(float(r["sent_s"]) >= float(r["offset_s"]) for r in rows)
    assert {r["arm"] for r in rows} == {"off", "cold"}
    assert json.loads((out / "report.json").read_text())["settings"]["rate"] == 40.0
