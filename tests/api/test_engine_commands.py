"""``api.probe``, ``api.check`` and ``api.cost``: what ``engines probe``,
``engines check`` and ``engines cost`` do, as library functions taking one
options record and returning a typed result (the commands print it). Real
parts: the engines' grammars with the embedded model's tokenizer, and a
streaming HTTP server on 127.0.0.1 (tests/cost_server.py)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cost_server import CostServer

import conformbench
from conformbench import api
from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.records.generation import BackendConfig


@pytest.fixture()
def server() -> Iterator[CostServer]:
    with CostServer() as s:
        yield s


def test_the_engine_commands_are_public() -> None:
    for name in ("probe", "check", "cost", "ProbeOptions", "CheckOptions", "CostOptions"):
        assert name in api.__all__ and name in conformbench.__all__
        assert getattr(conformbench, name) is getattr(api, name)


def test_probe_options_default_as_the_command_does() -> None:
    """The probe's request timeout is the backends' default (not imported, to keep the api light)."""
    assert api.ProbeOptions(out=Path("x")).timeout_s == BackendConfig.timeout_s


def test_probe_refuses_names_before_any_model_loads(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"maximm.*did you mean 'maximum'"):
        api.probe(api.ProbeOptions(out=tmp_path, keywords=("maximm",), engines=("llguidance",)))
    with pytest.raises(UsageError, match="--base-url is for a server"):
        api.probe(api.ProbeOptions(out=tmp_path, base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(UsageError, match="n_per_keyword: expected a whole number of at least 1, not 0"):
        api.probe(api.ProbeOptions(out=tmp_path, n_per_keyword=0))
    assert list(tmp_path.iterdir()) == []


def test_check_returns_the_report_it_wrote(tmp_path: Path) -> None:
    done = api.check(api.CheckOptions(out=tmp_path / "api", engines=("llguidance",),
                                      suites=("json-schema-test-suite",), limit=2, mask_positions=1))
    assert [f.name for f in done.files] == ["engines-check.json", "engines-check.md", "engines-check.html"]
    written = json.loads(done.files[0].read_text())
    assert written == json.loads(done.report.model_dump_json())
    (engine,) = done.report.engines
    assert (engine.engine, engine.sources[0].schemas) == ("llguidance", 2)
    # the command is this call: its verdicts are the same (timings aside)
    assert main(["engines", "check", "--engine", "llguidance", "--suite", "json-schema-test-suite", "--limit", "2",
                 "--mask-positions", "1", "--out", str(tmp_path / "cli")]) == 0
    cli = json.loads((tmp_path / "cli" / "engines-check.json").read_text())
    assert _verdicts(cli) == _verdicts(written)


def _verdicts(report: dict[str, object]) -> list[dict[str, object]]:
    engines = report["engines"]
    assert isinstance(engines, list)
    return [{k: v for k, v in s.items() if k not in ("compile", "mask") and "seconds" not in k}
            for e in engines for s in e["sources"]]


def test_check_refuses_a_backend_without_a_tokenizer_reader(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="the openai backend cannot read a tokenizer without its model"):
        api.check(api.CheckOptions(out=tmp_path, backend="openai", engines=("llguidance",), suites=("generated",),
                                   n=2))


def _cost_options(server: CostServer, out: Path, **changes: object) -> api.CostOptions:
    options = api.CostOptions(out=out, base_url=server.base_url, concurrency=(1,), n=2, repeats=1, max_tokens=16,
                              timeout_s=5.0, progress=False)
    return dataclasses.replace(options, **changes)  # type: ignore[arg-type]


def test_cost_returns_the_report_files_and_gates(server: CostServer, tmp_path: Path) -> None:
    done = api.cost(_cost_options(server, tmp_path, fail_if=("validity_on < 2", "validity_off > 0.5")))
    assert [p.name for p in done.files] == ["report.json", "report.md", "latency.svg"]
    assert json.loads(done.files[0].read_text()) == json.loads(done.report.model_dump_json())
    assert done.report.complete and {a.arm for a in done.report.arms} == {"off", "warm", "cold"}
    # validity on is 1.0 (< 2 holds: tripped); off is 0 (> 0.5 does not): exit 1, raised by no one
    assert {(c.gate.text, c.tripped) for c in done.checks} == {("validity_on < 2", True),
                                                               ("validity_off > 0.5", False)}
    assert done.exit_code == 1
    again = api.cost(_cost_options(server, tmp_path))  # resumed: nothing measured again
    assert again.exit_code == 0 and again.checks == [] and again.report.arms == done.report.arms


def test_cost_checks_every_option_before_reading_or_sending(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for options, said in [
        (api.CostOptions(out=out), "engines cost needs --base-url URL"),
        (api.CostOptions(out=out, base_url="http://127.0.0.1:9/v1", concurrency=(1, 1)),
         "--concurrency names a level twice"),
        (api.CostOptions(out=out, base_url="http://127.0.0.1:9/v1", concurrency=(0,)),
         r"concurrency: expected whole numbers of at least 1, not \(0,\)"),
        (api.CostOptions(out=out, base_url="http://127.0.0.1:9/v1", dialect="json_shema"),
         "--dialect: unknown value 'json_shema' \\(did you mean 'json_schema'\\?\\)"),
        (api.CostOptions(out=out, base_url="http://127.0.0.1:9/v1", fail_if=("tpot_ratoi > 1",)),
         "did you mean 'tpot_ratio'"),
        (api.CostOptions(out=out, backend="llamacpp", base_url="http://127.0.0.1:9/v1"),
         "--base-url and --dialect are for a server"),
    ]:
        with pytest.raises(UsageError, match=said):
            api.cost(options)
    assert not out.exists()

