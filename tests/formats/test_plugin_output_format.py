"""An output format added from outside the package is one class and one
decorator: it then renders, parses, shows in prompts with its own display
name, and gets its own column in the report, with no edit to core code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from conformbench.backends.base import backends
from conformbench.backends.manifest import BackendManifest
from conformbench.formats.base import ParsedOutput, format_display_name, output_formats, sorted_format_names
from conformbench.formats.limits import DEFAULT_LIMITS
from conformbench.formats.reading import read_answer
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.generation import BackendConfig, GenerationRequest, GenerationResult
from conformbench.reports.markdown import render_markdown
from conformbench.reports.rescore import score_replays
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec


class CompactJson:
    """JSON on one line, fenced as ```compact."""

    name: ClassVar[str]
    display_name: ClassVar[str] = "compact JSON"
    order: ClassVar[int] = 9
    languages: ClassVar[tuple[str, ...]] = ("compact",)

    def parse(self, text: str, schema: Schema | None = None) -> ParsedOutput:
        return read_answer(text, self.languages, DEFAULT_LIMITS, json.loads)

    def dump(self, value: JSONValue, schema: Schema | None = None) -> str:
        return json.dumps(value, separators=(",", ":"))


class EchoBackend:
    """Answers every prompt with one compact sample and records the prompts."""

    name: ClassVar[str]
    manifest: ClassVar[BackendManifest] = BackendManifest()
    prompts: ClassVar[list[str]] = []

    def __init__(self, config: BackendConfig) -> None:
        self.config = config

    def generate(self, request: GenerationRequest) -> GenerationResult:
        EchoBackend.prompts.append("\n".join(m.content for m in request.prompt.messages))
        return GenerationResult('```compact\n{"a":1}\n```', "stop", prompt_tokens=5, completion_tokens=5)

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        return [self.generate(r) for r in requests]

    def metadata(self) -> dict[str, Any]:
        return {"model": "echo"}

    def close(self) -> None:
        pass


if "compact" not in output_formats:
    output_formats.register("compact")(CompactJson)
if "echo-compact" not in backends:
    backends.register("echo-compact")(EchoBackend)


def test_the_registry_names_the_plugin_and_it_round_trips() -> None:
    fmt = output_formats.get("compact")()
    assert CompactJson.name == "compact"  # set by register: the name is written once
    value = {"b": [1, 2.5, None, "x"], "a": {"c": True}}
    text = fmt.dump(value)
    assert fmt.parse(f"Here:\n```compact\n{text}\n```\n").value == value
    assert not fmt.parse("```compact\n{oops\n```").ok
    assert format_display_name("compact") == "compact JSON"
    assert sorted_format_names(["compact", "json", "yaml"]) == ["json", "yaml", "compact"]


def test_a_run_prompts_in_it_and_the_report_has_its_column(tmp_path: Path) -> None:
    spec = parse_spec({
        "models": [{"label": "echo", "backend": "echo-compact"}],
        "tasks": [{"name": "generation", "n": 2, "schema_formats": ["json"], "output_formats": ["compact"],
                   "arms": ["prompt_only"]}],
        "out": str(tmp_path), "canary": False, "quiet": True,
    })
    summary = execute(spec)
    assert summary.total == 2
    assert EchoBackend.prompts and all("compact JSON" in p for p in EchoBackend.prompts)
    report = render_markdown(score_replays([summary.replay]))
    assert "| schema \\ output | compact |" in report
    assert "json->compact" in report
