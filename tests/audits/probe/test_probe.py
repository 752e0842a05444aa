from __future__ import annotations

import json

import pytest

from conformbench.audits.probe.cases import PROBE_CASES
from conformbench.audits.probe.run import (
    ProbeConfig,
    ProbeSample,
    _classify,
    probe_steps,
    run_probe,
    select_cases,
    write_probe,
)
from conformbench.backends.manifest import BackendManifest
from conformbench.errors import UnknownNameError, UsageError
from conformbench.validator.schema_validator import check_schema


@pytest.mark.parametrize("case", PROBE_CASES, ids=lambda c: c.keyword)
def test_probe_schemas_are_valid_and_use_their_keyword(case):
    check_schema(case.schema)
    assert f'"{case.keyword}"' in json.dumps(case.schema)
    assert case.prompts


def test_select_cases_rejects_unknown_keywords_with_a_hint():
    with pytest.raises(UsageError, match="did you mean 'maximum'"):
        select_cases(["maximm"])
    assert [c.keyword for c in select_cases(["pattern", "enum"])] == ["pattern", "enum"]
    assert len(select_cases([])) == len(PROBE_CASES)


def test_unknown_engine_is_rejected_before_any_work():
    with pytest.raises(UnknownNameError):
        probe_steps(ProbeConfig(engines=("gbfn",)))


def _sample(parsed: bool, violations: list[str], finish: str = "stop") -> ProbeSample:
    return ProbeSample(prompt="p", text="t", finish_reason=finish, parsed=parsed, violations=violations)


def test_classify():
    assert _classify([_sample(True, []), _sample(True, ["maximum"])], "maximum")[0] == "ignored"
    # a violation of another keyword says nothing about this one
    assert _classify([_sample(True, ["type"]), _sample(True, [])], "maximum")[0] == "enforced"
    status, detail = _classify([_sample(False, [], "length")], "maximum")
    assert status == "inconclusive" and "length" in detail


@pytest.mark.long
@pytest.mark.slow
def test_probe_two_keywords_writes_json_and_markdown(llama_backend, tmp_path):
    config = ProbeConfig(engines=("gbnf", "llguidance"), keywords=("maximum", "uniqueItems"), n_per_keyword=1)
    ticks: list[int] = []
    report = run_probe(llama_backend, config, lambda _label, steps: ticks.append(steps))
    assert sum(ticks) == probe_steps(config) == 2 * (2 * 1 + 1)
    json_path, md_path = write_probe(report, tmp_path / "out")

    data = json.loads(json_path.read_text())
    status = {(e["engine"], k["keyword"]): k["status"] for e in data["engines"] for k in e["keywords"]}
    # llama-cpp-python's GBNF converter has no numeric bounds (a nudged model
    # writes 5000 through it) and lets a duplicate through; llguidance holds
    # the bound. It compiles uniqueItems leniently (left to the validator),
    # but greedy SmolLM2 lists distinct letters until the budget cuts it, so
    # no sample can be judged: the probe must say inconclusive, not enforced
    detail = {(e["engine"], k["keyword"]): k["detail"] for e in data["engines"] for k in e["keywords"]}
    assert status == {("gbnf", "maximum"): "ignored", ("gbnf", "uniqueItems"): "ignored",
                      ("llguidance", "maximum"): "enforced", ("llguidance", "uniqueItems"): "inconclusive"}
    assert detail[("llguidance", "uniqueItems")] == "no output could be judged: unparsable (length)"
    assert all(e["canary"] == "passed" for e in data["engines"])
    assert data["model"]["model_sha256"] == llama_backend.metadata()["model_sha256"]

    md = md_path.read_text()
    assert "| keyword | gbnf | llguidance |" in md
    assert "| maximum | ignored (1/1 broke) |" in md  # the attempts it rests on (verdict_cell)


class _NoModel:
    """A backend that must not be asked for anything but its metadata."""

    manifest = BackendManifest(constraint_side="local")

    def generate(self, request):
        raise AssertionError("no generation expected")

    def metadata(self):
        return {"model_file": "none"}


def test_probe_forms_count_steps_and_a_form_the_engine_lacks_is_refused_with_the_reason(tmp_path):
    config = ProbeConfig(engines=("gbnf", "llguidance"), keywords=("maximum",), n_per_keyword=2,
                         output_formats=("json", "yaml", "xml"))
    # gbnf json, llguidance json/yaml/xml: 4 probed pairs of 1 canary + 2 samples
    assert probe_steps(config) == 4 * 3
    only_gbnf = ProbeConfig(engines=("gbnf",), keywords=("maximum",), output_formats=("yaml",))
    assert probe_steps(only_gbnf) == 0
    report = run_probe(_NoModel(), only_gbnf)
    (probe,) = report.engines
    assert (probe.engine, probe.output_format, probe.canary) == ("gbnf", "yaml", "skipped")
    assert probe.reason is not None and "constrains only json output, not yaml" in probe.reason
    assert [(k.keyword, k.status) for k in probe.keywords] == [("maximum", "refused")]
    assert report.settings["output_formats"] == ["yaml"]
    _json, md = write_probe(report, tmp_path)
    assert "| keyword | gbnf/yaml |" in md.read_text()
    with pytest.raises(UsageError, match="yml"):
        probe_steps(ProbeConfig(output_formats=("yml",)))
