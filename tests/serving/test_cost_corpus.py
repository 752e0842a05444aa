"""``engines cost --schemas``: a real JSON Schema corpus (a folder of
*.json or a JSONL in JSONSchemaBench's layout) read as untrusted input,
every unusable schema left out with why, and the keywords the grammar's
answers broke counted per keyword (serving/dropped.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cost_server import CostServer

from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.serving.dropped import dropped_keywords
from conformbench.serving.workload import PROMPT_SCHEMA_CHARS, CostPrompt, corpus_prompts

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "cost-corpus"


@pytest.fixture()
def server() -> Iterator[CostServer]:
    with CostServer() as s:
        yield s


def _bad_corpus(folder: Path) -> Path:
    folder.mkdir()
    for name in ("person", "colour"):
        (folder / f"{name}.json").write_text((CORPUS / f"{name}.json").read_text())
    (folder / "a-not-json.json").write_text("{not json")
    (folder / "b-array.json").write_text("[1, 2]")
    (folder / "c-deep.json").write_text('{"items": ' * 150 + "{}" + "}" * 150)
    (folder / "d-huge.json").write_text(json.dumps({"enum": ["x" * 100] * (PROMPT_SCHEMA_CHARS // 100)}))
    (folder / "e-bad-type.json").write_text('{"type": 5}')
    return folder


def test_the_shipped_example_corpus_reads_whole() -> None:
    prompts, excluded = corpus_prompts(CORPUS, 5)
    assert [p.id for p in prompts] == ["code", "colour", "person", "point", "tags"] and excluded == ()
    assert all(json.dumps(p.schema, indent=2) in p.prompt.messages[-1].content for p in prompts)


def test_every_unusable_schema_is_left_out_with_why(tmp_path: Path) -> None:
    prompts, excluded = corpus_prompts(_bad_corpus(tmp_path / "c"), 2)
    assert [p.id for p in prompts] == ["colour", "person"]
    reasons = {e.id: e.reason for e in excluded}
    assert set(reasons) == {"a-not-json", "b-array", "c-deep", "d-huge", "e-bad-type"}
    assert reasons["a-not-json"].startswith("not JSON") and "a JSON list" in reasons["b-array"]
    assert "nested deeper" in reasons["c-deep"] and "a prompt shows" in reasons["d-huge"]
    assert reasons["e-bad-type"].startswith("not usable")


def test_a_jsonl_in_jsonschemabenchs_layout(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    rows = [{"json_schema": (CORPUS / "code.json").read_text(), "unique_id": "o1"},
            {"json_schema": "{broken", "unique_id": "o2"}, {"schema": {"type": "integer"}, "id": "o3"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    prompts, excluded = corpus_prompts(path, 2)
    assert [p.id for p in prompts] == ["o1", "o3"] and [e.id for e in excluded] == ["o2"]


def test_too_few_usable_schemas_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"holds 2 usable schemas \(5 left out; the first left out: a-not-json"):
        corpus_prompts(_bad_corpus(tmp_path / "c"), 3)


def test_the_report_lists_the_schemas_left_out(server: CostServer, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cost"
    assert main(["engines", "cost", "--base-url", server.base_url, "--schemas", str(_bad_corpus(tmp_path / "c")),
                 "-n", "2", "--concurrency", "1", "--repeats", "1", "--max-tokens", "32", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert len(report["excluded"]) == 5 and report["settings"]["prompts"] == "corpus c"
    # the scripted server answers a valid instance under the grammar: parsed, and no keyword broken
    assert {d["arm"]: (d["answered"], d["parsed"], d["keywords"]) for d in report["dropped"]} == {
        "warm": (2, 2, []), "cold": (2, 2, [])}
    md = (out / "report.md").read_text()
    assert "## Schemas left out" in md and "e-bad-type.json (e-bad-type): not usable" in md
    assert "## Keywords the grammar dropped" in md


def test_a_dropped_keyword_is_counted_under_the_schemas_that_use_it(tmp_path: Path) -> None:
    out = tmp_path / "cost"
    with CostServer("loose") as loose:
        assert main(["engines", "cost", "--base-url", loose.base_url, "--schemas", str(CORPUS), "-n", "5",
                     "--concurrency", "1", "--repeats", "1", "--max-tokens", "64", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    # person and point close their objects (additionalProperties: false); the others allow the extra property
    for arm in report["dropped"]:
        assert (arm["answered"], arm["parsed"]) == (5, 5)
        assert arm["keywords"] == [{"keyword": "additionalProperties", "broken": 2, "under": 2,
                                    "examples": ["person", "point"]}]
    assert {c["validity_on"]["k"] for c in report["comparisons"]} == {3}
    assert "| `additionalProperties` | 2 | 2 | person, point |" in (out / "report.md").read_text()


@pytest.mark.parametrize(("extra", "said"), [
    (["--prompts", "x.jsonl"], "--prompts and --schemas both name the prompts"),
    (["-n", "9"], "holds 5 usable schemas"),
])
def test_bad_corpus_options_are_one_line(extra: list[str], said: str, server: CostServer, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["engines", "cost", "--base-url", server.base_url, "--schemas", str(CORPUS), "-n", "5",
                 "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and not server.streamed


def test_dropped_counts_each_keyword_once_per_answer_under_its_schema() -> None:
    schema = {"type": "object", "properties": {"a": {"maxLength": 2}}, "required": ["a"]}
    prompts = [CostPrompt("p0", None, schema), CostPrompt("p1", None, {"type": "object"})]  # type: ignore[arg-type]
    row = {"tokens": 3}
    measured = {
        (0, 1, "warm"): [{**row, "index": 0, "violated": ["maxLength", "required"]},
                         {**row, "index": 1, "violated": []}, {**row, "index": 0, "violated": None},
                         {"tokens": None, "index": 1, "violated": None}],
        (0, 1, "off"): [{**row, "index": 0, "violated": ["required"]}],
    }
    [warm] = dropped_keywords(measured, prompts, list(measured))
    assert (warm.arm, warm.answered, warm.parsed) == ("warm", 3, 2)
    assert [(k.keyword, k.broken, k.under, k.examples) for k in warm.keywords] == [
        ("maxLength", 1, 1, ["p0"]), ("required", 1, 1, ["p0"])]
