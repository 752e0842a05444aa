"""Constrained YAML and XML generation, live on the embedded model through
the whole run: the canary of each answer form, the grammar recorded as the
engine input, and samples our strict parsers read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformbench.audits.canary import canary_constant
from conformbench.cli.main import main
from conformbench.engines.grammars.matcher import lark_grammar
from conformbench.formats.base import output_formats
from conformbench.records.replay_file import REPLAY_NAME


@pytest.mark.long
@pytest.mark.slow
def test_constrained_yaml_and_xml_run_live_through_the_canary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = main(["run", "--task", "generation", "-n", "2", "--arm", "constrained", "--engine", "llguidance",
                 "--schema-format", "json", "--output-format", "yaml,xml", "--max-tokens", "64",
                 "--out", str(out), "--quiet"])
    assert code == 0
    records = [json.loads(line) for line in (out / REPLAY_NAME).read_text(encoding="utf-8").splitlines()]
    # the model record written after the canary, then its end-of-run copy with the counters
    model, final = [r for r in records if r["kind"] == "model"]
    assert final.get("final") and final["canary"] == model["canary"]
    assert sorted(model["canary"]) == ["llguidance/xml", "llguidance/yaml"]
    for form in ("yaml", "xml"):
        verdict = model["canary"][f"llguidance/{form}"]
        assert verdict["passed"] and verdict["output_format"] == form
        parsed = output_formats.get(form)().parse(verdict["text"])
        assert parsed.ok and parsed.value == {"canary": canary_constant(0)}
    schemas = {r["item"]["id"]: r["item"]["input"]["schema"] for r in records if r["kind"] == "item"}
    generations = [r for r in records if r["kind"] == "generation"]
    def form_of(gen: dict[str, Any]) -> str:  # replay layout 3: a task's axes are the condition's axes (#61)
        return str(dict(gen["condition"]["axes"])["output_format"])

    assert sorted((g["item_id"], form_of(g)) for g in generations) == sorted(
        (i, f) for i in schemas for f in ("yaml", "xml"))
    stopped = 0
    for gen in generations:
        form, schema = form_of(gen), schemas[gen["item_id"]]
        assert gen["finish_reason"] in ("stop", "length"), gen
        assert gen["engine_input"] == lark_grammar(schema, form)
        if gen["finish_reason"] == "stop":  # a sample cut at max_tokens is unfinished, not unreadable
            stopped += 1
            parsed = output_formats.get(form)().parse(gen["text"], schema)
            assert parsed.ok, (gen["text"], parsed.error)
    assert stopped >= 2
