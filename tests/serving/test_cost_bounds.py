"""``engines cost`` against hostile options, journals and servers (issue
#59: items 6, 7, 8 and 10's cost points; issue #58 item 3's errors column,
warning line and thin ratios): each one line and exit 2, or a recorded,
explained exclusion; against tests/cost_server.py, a real streaming server."""

from __future__ import annotations

import json
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
    return main(["engines", "cost", "--base-url", url, "--concurrency", "1", "-n", "3", "--repeats", "1",
                 "--max-tokens", "16", "--timeout", "5", "--out", str(out), *extra])


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize(("flag", "value", "said"), [
    ("--timeout", "inf", "--timeout"), ("--timeout", "nan", "--timeout"), ("--rate", "inf", "--rate"),
    ("--rate", "nan", "--rate"), ("--seed", "-1", "--seed"), ("--seed", str(2**31), "--seed"),
    ("--max-tokens", str(2**21), "--max-tokens"), ("--repeats", "200000000", "--repeats"),
    ("-n", str(10**9), "-n"), ("--concurrency", "1,99999999", "--concurrency"),
    ("--cache", "warm,warm", "--cache names a state twice"), ("--concurrency", "1,1", "names a level twice"),
])
def test_a_value_out_of_range_is_one_line_before_anything_is_sent(
        server: CostServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str,
        said: str) -> None:
    out = tmp_path / "cost"
    assert _cost(server.base_url, out, flag, value) == 2
    assert said in _error(capsys)
    assert server.posts == 0 and not out.exists()


def test_two_base_urls_are_refused_not_last_wins(server: CostServer, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert _cost("http://127.0.0.1:9/v1", tmp_path / "cost", "--base-url", server.base_url) == 2
    assert "--base-url is given 2 times" in _error(capsys)
    assert server.posts == 0


def _journal_rows(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / JOURNAL_NAME).read_text().splitlines()]


@pytest.mark.parametrize(("field", "value"), [
    ("first_s", "a string"), ("first_s", float("inf")), ("chunks", [1]), ("usage", {"completion_tokens": "7"}),
    ("index", -1), ("index", 3), ("concurrency", 4), ("arm", "lukewarm"), ("text", 5), ("repeat", True),
])
def test_a_damaged_journal_is_one_line_naming_its_line(
        server: CostServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object) -> None:
    out = tmp_path / "cost"
    assert _cost(server.base_url, out) == 0
    rows = _journal_rows(out)
    at = next(i for i, r in enumerate(rows) if r.get("kind") == "request")
    rows[at] = {**rows[at], field: value}
    (out / JOURNAL_NAME).write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert _cost(server.base_url, out) == 2
    line = _error(capsys)
    assert f"is damaged at line {at + 1}" in line and "delete it to start over" in line


def test_a_line_that_is_not_json_mid_journal_is_damage_not_a_torn_end(
        server: CostServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cost"
    assert _cost(server.base_url, out) == 0
    lines = (out / JOURNAL_NAME).read_text().splitlines()
    lines[2] = lines[2][:10]
    (out / JOURNAL_NAME).write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert _cost(server.base_url, out) == 2
    assert "is damaged at line 3 (not JSON)" in _error(capsys)


def test_a_filtered_answer_is_an_error_not_a_valid_answer(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cost"
    with CostServer("filter") as server:
        assert _cost(server.base_url, out, "--cache", "warm", "-n", "2") == 2  # every grammar-on request filtered
    assert "finish_reason 'content_filter'" in capsys.readouterr().err
    rows = [r for r in _journal_rows(out) if r.get("kind") == "request" and r["arm"] == "warm"]
    assert len(rows) == 2 and all("content_filter" in r["error"] for r in rows)  # each journalled as an error
    report = json.loads((out / "report.json").read_text())
    assert [a["arm"] for a in report["arms"]] == ["off"] and not report["complete"]  # none scored as an answer


def test_an_absurd_token_count_is_not_trusted(tmp_path: Path) -> None:
    out = tmp_path / "cost"
    with CostServer("inflate") as server:
        assert _cost(server.base_url, out, "--cache", "warm") == 0
    report = json.loads((out / "report.json").read_text())
    warm = next(a for a in report["arms"] if a["arm"] == "warm")
    rows = [r for r in _journal_rows(out) if r.get("kind") == "request" and r["arm"] == "warm"]
    assert all(r["usage"]["completion_tokens"] == 2**31 - 1 for r in rows)  # what the server claimed is kept
    assert warm["usage_distrusted"] == 3 and warm["tokens_from"] == "distrusted"
    assert warm["output_tokens"] == sum(r["chunks"] for r in rows)  # the events it streamed, counted
    assert "3 server counts not believed" in (out / "report.md").read_text()


def test_lost_requests_get_an_errors_column_a_warning_and_no_thin_ratio(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cost"
    with CostServer("lossy") as server:
        assert main(["engines", "cost", "--base-url", server.base_url, "--concurrency", "1", "-n", "3",
                     "--repeats", "1", "--max-tokens", "16", "--timeout", "5", "--cache", "warm,cold",
                     "--out", str(out)]) == 0
    err = capsys.readouterr()
    report = json.loads((out / "report.json").read_text())
    lost = sum(a["errors"] for a in report["arms"])
    assert lost == report["lost"] == 3  # every second grammar-on stream of 6 ended without text
    assert "warning: 3 of 9 requests gave no answer" in err.err and "ended without text" in err.err
    assert "errors off/on" in err.out
    for c in report["comparisons"]:
        on = next(a for a in report["arms"] if a["arm"] == c["arm"])
        if on["n"] - on["errors"] < 2:  # one answer is an anecdote: no ratio
            assert c["ttft_ratio"]["median"] is None and c["ttft_ratio"]["thin_repeats"] == 1
            assert "n/a (<2 answers)" in err.out
        else:
            assert c["ttft_ratio"]["median"] is not None
    assert "requests gave no answer" in (out / "report.md").read_text()


def test_prompts_go_through_the_schema_limits(tmp_path: Path, server: CostServer,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big.jsonl"
    with big.open("w") as fh:  # one line over the 8 MiB a schema file may hold
        fh.write('{"prompt": "hi", "schema": {"type": "object", "description": "' + "x" * (9 << 20) + '"}}\n')
    assert _cost(server.base_url, tmp_path / "a", "--prompts", str(big), "-n", "1") == 2
    assert "line 1 is over 8 MiB" in _error(capsys)
    wide = tmp_path / "wide.jsonl"
    wide.write_text(json.dumps({"prompt": "hi", "schema": {"type": "string", "description": "x" * 70_000}}) + "\n")
    assert _cost(server.base_url, tmp_path / "b", "--prompts", str(wide), "-n", "1") == 2
    assert "over the 64000 a prompt shows" in _error(capsys)
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"prompt": "hi", "schema": ' + '{"items": ' * 200 + "{}" + "}" * 200 + "}\n")
    assert _cost(server.base_url, tmp_path / "c", "--prompts", str(deep), "-n", "1") == 2
    assert "deep" in _error(capsys)


def test_a_huge_repeat_count_plans_lazily() -> None:
    from conformbench.serving.measure import CostConfig, batch_plan, plan_size

    config = CostConfig(levels=(1, 4), n=1, repeats=999)
    plan = batch_plan(config)
    assert next(plan) == (0, 1, "off") and plan_size(config) == 999 * 2 * 3
    assert sum(1 for _ in plan) == plan_size(config) - 1
