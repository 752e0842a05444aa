"""``import_lm_eval``: files in lm-eval's ``jsonschema_bench`` samples
shape (written here; nothing of lm-eval's is shipped), their metrics
computed the way lm-eval's metrics.py does (strip characters, Draft 2020-12
with a format checker), imported, scored, and the differences listed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

import conformbench
from conformbench.errors import UsageError
from conformbench.importers.lm_eval import DIFFERENCES_NAME, import_lm_eval

OBJECT = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
DOCS: list[tuple[dict[str, Any], str]] = [
    (OBJECT, '{"a": 1}'),
    (OBJECT, '```json\n{"a": 2}\n```'),
    ({"type": "null"}, "null"),  # lm-eval strips it to "ull"
    (OBJECT, '{"a": "one"}'),
    (OBJECT, "I cannot do that."),
]


def _their_reading(schema: dict[str, Any], text: str) -> tuple[float, float]:
    """lm-eval's json_validity and schema_compliance of one response."""
    try:
        value = json.loads(text.strip().strip("```").strip("json").strip())  # noqa: B005 - lm-eval's own, on purpose
    except json.JSONDecodeError:
        return 0.0, 0.0
    ok = Draft202012Validator(schema, format_checker=FormatChecker()).is_valid(value)
    return 1.0, float(ok)


def _samples(path: Path, docs: list[tuple[dict[str, Any], str]]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for doc_id, (schema, text) in enumerate(docs):
            validity, compliance = _their_reading(schema, text)
            prompt = f"JSON schema: {json.dumps(schema)}\n\nJSON object: "
            fh.write(json.dumps({
                "doc_id": doc_id, "doc": {"json_schema": json.dumps(schema), "unique_id": f"u{doc_id}"},
                "target": json.dumps(schema),
                "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": {"until": ["\n\n"]}}},
                "resps": [[text]], "filtered_resps": [text], "filter": "none",
                "metrics": ["json_validity", "schema_compliance"],
                "json_validity": validity, "schema_compliance": compliance}) + "\n")
    return path


def test_import_scores_and_lists_the_differences(tmp_path: Path) -> None:
    source = _samples(tmp_path / "samples_jsonschema_bench_easy_2025-01-01T00-00-00.jsonl", DOCS)
    done = import_lm_eval([source], tmp_path / "out", model="m")
    assert done.items == 5 and done.tasks == {"jsonschema_bench_easy": 5}
    assert done.theirs_compliance == pytest.approx(2 / 5)
    assert done.ours_compliance == pytest.approx(3 / 5)
    diffs = json.loads((tmp_path / "out" / DIFFERENCES_NAME).read_text())
    assert [(d["item_id"], d["ours"], d["theirs"]) for d in diffs] == [
        ("jsonschema_bench_easy/u2", "valid", "not JSON")]
    assert "strips characters, not a fence" in diffs[0]["why"]
    conformbench.score(done.replay, out=tmp_path / "scored")
    (result,) = json.loads((tmp_path / "scored/report.json").read_text())["results"]
    (arm,) = result["arms"]
    assert result["task"] == "generation" and arm["n"] == 5
    assert (arm["validity"]["k"], arm["parsed"]["k"]) == (3, 4)


def test_the_prompt_sent_is_kept(tmp_path: Path) -> None:
    source = _samples(tmp_path / "samples_jsonschema_bench_hard_2025.jsonl", DOCS[:1])
    done = import_lm_eval([source], tmp_path / "out")
    from conformbench.records.replay_file import read_replay

    (gen,) = read_replay(done.replay).generations
    assert gen.prompt.messages[0].content.startswith("JSON schema: {")


@pytest.mark.parametrize(("name", "line", "message"), [
    ("samples_t_1.jsonl", '{"doc_id": 0, "doc": {}, "resps": [["x"]]}', "json_schema"),
    ("samples_t_1.jsonl", '{"doc_id": 0, "doc": {"json_schema": "{"}, "resps": [["x"]]}', "not JSON"),
    ("samples_t_1.jsonl", "[1]", "not an lm-eval jsonschema_bench sample"),
    ("results.jsonl", '{"doc_id": 0}', "not an lm-eval samples file"),
])
def test_bad_samples_are_usage_errors(tmp_path: Path, name: str, line: str, message: str) -> None:
    source = tmp_path / name
    source.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        import_lm_eval([source], tmp_path / "out")


def test_a_doc_twice_is_refused(tmp_path: Path) -> None:
    source = _samples(tmp_path / "samples_t_1.jsonl", DOCS[:1])
    source.write_text(source.read_text() * 2)
    with pytest.raises(UsageError, match="appears twice"):
        import_lm_eval([source], tmp_path / "out")
