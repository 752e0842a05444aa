"""The BFCL v4 tasks on the embedded model: every envelope compiles under
llguidance, and one run of bfcl-multiple, bfcl-irrelevance and
bfcl-parallel (prompt_only and constrained, one item each, a short budget)
ends with the call section in its report and the function format in its
replay."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.records.items import TaskOptions
from conformbench.tasks.base import tasks
from conformbench.tasks.bfcl.calls import CATEGORIES
from conformbench.tasks.bfcl.v4 import task_name

pytestmark = [
    pytest.mark.long,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama_cpp is not importable"),
]


def test_llguidance_compiles_every_call_envelope() -> None:
    from conformbench.backends.llamacpp.backend import LlamaCppBackend
    from conformbench.records.generation import BackendConfig, Constraint

    backend = LlamaCppBackend(BackendConfig())
    try:
        for category in CATEGORIES:
            task = tasks.get(task_name(category))(TaskOptions())
            for item, condition in ((i, task.conditions()[1]) for i in task.items()):
                schema = task.contract_schema(item, condition)
                assert schema is not None
                backend.compile(Constraint(schema=schema, engine="llguidance"))
    finally:
        backend.close()


def test_three_categories_run_under_both_arms_and_report_the_calls(tmp_path: Path) -> None:
    for task in ("bfcl-multiple", "bfcl-irrelevance", "bfcl-parallel"):
        out = tmp_path / task
        code = main(["run", "--task", task, "-n", "1", "--arm", "prompt_only", "--arm", "constrained",
                     "--function-format", "yaml", "--json-tokens", "48", "--threads", "1", "--out", str(out)])
        assert code == 0
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
        text = json.dumps(report)
        assert "bfcl_calls" in text and "function_format=yaml/constrained[calls]@llguidance" in text
        records = [json.loads(line) for line in (out / "replay.jsonl").read_text(encoding="utf-8").split("\n")
                   if line.strip()]
        generations = [r for r in records if r.get("kind") == "generation"]
        assert len(generations) == 2
        assert all(g["condition"]["axes"] == [["function_format", "yaml"]] for g in generations)
        system = generations[0]["prompt"]["messages"][0]["content"]
        assert "in YAML format" in system and "\nFunction " in system  # the functions were shown, in YAML
        markdown = (out / "report.md").read_text(encoding="utf-8")
        assert "call decision" in markdown and "AST accuracy" in markdown
