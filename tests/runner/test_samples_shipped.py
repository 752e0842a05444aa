"""One sample at temperature 0 is exactly the greedy run the shipped
replays came from: the header spec plans the units the replay holds, each
once, each request keeps the run's seed, and each record
the run loop would write for the recorded answer is the shipped line, byte
for byte (no ``sample`` or ``seed`` key), in replay layout 3 (these tasks'
conditions have no axes: layout 2's empty ConCodeEval fields left out);
rescoring adds no sampling section."""

from __future__ import annotations

import json
from functools import cache

import pytest

from conformbench.records.generation import GenerationResult
from conformbench.records.replay import GenerationRecord
from conformbench.records.spec import RunSpec
from conformbench.reports.rescore import score_replays
from conformbench.runner.run import build_plans
from conformbench.runner.session import record_of as _record
from conformbench.runner.shipped import shipped_replay
from conformbench.runner.units import final_request

#: the arms replays (the ConCodeEval ones plan datasets of hundreds of schemas)
REPLAYS = ("gsm8k", "bfcl-simple")


#: what layout 2 wrote in a condition without the ConCodeEval axes
_EMPTY_V2_CELL = b',"schema_format":null,"output_format":null,"shots":0'


def _as_v3(raw: bytes) -> bytes:
    """A shipped layout 2 generation line as layout 3 writes it."""
    assert raw.count(_EMPTY_V2_CELL) == 1
    return raw.replace(_EMPTY_V2_CELL, b"")


@cache
def _shipped(name: str) -> tuple[RunSpec, dict[tuple[str, str, str, str], bytes], list[GenerationRecord]]:
    """The header spec, the latest line of every generation key, and the
    generations in first-written order."""
    spec: RunSpec | None = None
    lines: dict[tuple[str, str, str, str], bytes] = {}
    records: dict[tuple[str, str, str, str], GenerationRecord] = {}
    for raw in shipped_replay(name).read_bytes().splitlines():
        data = json.loads(raw)
        if data["kind"] == "header":
            spec = RunSpec.model_validate(data["spec"])
        elif data["kind"] == "generation":
            gen = GenerationRecord.model_validate(data)
            lines[gen.key] = _as_v3(raw)
            records.setdefault(gen.key, gen)
            records[gen.key] = gen if gen.finish_reason != "error" else records[gen.key]
    assert spec is not None
    return spec, lines, list(records.values())


@pytest.mark.parametrize("name", REPLAYS)
def test_the_spec_plans_the_recorded_units(name: str) -> None:
    spec, _, records = _shipped(name)
    assert spec.decoding.samples == 1 and spec.decoding.temperature == 0
    units = [u for plan in build_plans(spec) for model in spec.models for u in plan.units(model.label)]
    # the same units, one each (the shipped order is the resumed runs' own)
    assert sorted(u.key for u in units) == sorted(g.key for g in records)
    assert len({u.key for u in units}) == len(units)
    assert all(u.sample == 0 for u in units)


@pytest.mark.parametrize("name", REPLAYS)
def test_the_run_loop_writes_the_shipped_lines_byte_for_byte(name: str) -> None:
    spec, lines, records = _shipped(name)
    by_key = {g.key: g for g in records}
    checked = 0
    for plan in build_plans(spec):
        for model in spec.models:
            for unit in plan.units(model.label):
                gen = by_key[unit.key]
                if gen.finish_reason == "excluded":
                    continue
                request = final_request(plan, unit, gen.free_text)
                assert request.settings.seed == spec.decoding.seed
                outcome = GenerationResult(
                    text=gen.text, finish_reason=gen.finish_reason, prompt_tokens=gen.prompt_tokens,
                    completion_tokens=gen.completion_tokens, seconds=gen.seconds,
                    compile_seconds=gen.compile_seconds, engine_input=gen.engine_input, error=gen.error,
                    unenforced=tuple(gen.unenforced))
                written = _record(unit, request, outcome, gen.free_text).model_dump_json().encode("utf-8")
                assert written == lines[unit.key], unit.key
                checked += 1
    assert checked >= 600


@pytest.mark.parametrize("name", REPLAYS)
def test_rescoring_adds_no_sampling_section(name: str) -> None:
    run = score_replays([shipped_replay(name)])
    assert all(s.name != "sampling" for r in run.results for s in r.sections)
