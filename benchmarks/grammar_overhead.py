"""What the YAML and XML answer grammars cost at decoding time: tokens/s
under llguidance's YAML and XML grammars (and its JSON grammar, for
reference) over unconstrained decoding, on the same prompts, in one run.

Sides (unconstrained, llguidance json, yaml, xml) take turns on one
llama.cpp backend, the order reversed every round so that drift in machine
load hits every side alike; tokens/s = completion tokens / generation
seconds (compile time excluded: a schema compiles once per run, and the
first compile of each side is done before timing). The prompts name no
format: each constraint forces its own, so the sides differ only by the
grammar. Targets (issue #16):

  tokens/s constrained[llguidance/yaml] / unconstrained   >= 0.9
  tokens/s constrained[llguidance/xml]  / unconstrained   >= 0.9
  (llguidance/json: for reference)

Also printed: compile seconds of each form per schema (median). Run alone
(llama.cpp slows many-fold when anything else runs on 2 cores):
python benchmarks/grammar_overhead.py [--quick] [--json out.json]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, cannot_measure, median, parser, threads_default

ENGINE = "llguidance"
FORMS = ("json", "yaml", "xml")
TARGET = 0.9

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 40},
            "age": {"type": "integer", "minimum": 0, "maximum": 120},
            "hobbies": {"type": "array", "items": {"type": "string", "maxLength": 30}, "maxItems": 5},
        },
        "required": ["name", "age", "hobbies"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "country": {"type": "string", "minLength": 2},
            "population": {"type": "integer", "minimum": 0},
            "landmarks": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        },
        "required": ["city", "country", "population", "landmarks"],
    },
]
PROMPTS = [
    ("Describe a fictional person called Ada: her name, age and hobbies.", 0),
    ("Describe a retired sailor: name, age and hobbies.", 0),
    ("Give facts about Paris: city, country, population and landmarks.", 1),
    ("Give facts about Kyoto: city, country, population and landmarks.", 1),
]


def _side_name(form: str | None) -> str:
    return "unconstrained" if form is None else f"{ENGINE}/{form}"


def throughput(backend: Any, rounds: int, max_tokens: int) -> dict[str, dict[str, float]]:
    from conformbench.records.generation import Constraint, DecodingSettings, GenerationRequest
    from conformbench.records.prompt import Message, Prompt

    sides: list[str | None] = [None, *FORMS]
    totals = {_side_name(s): {"tokens": 0.0, "seconds": 0.0, "stopped": 0.0} for s in sides}
    for text, _index in PROMPTS:  # warm-up, not timed: the first decodes pay for allocations
        backend.generate(GenerationRequest(Prompt((Message("user", text),)), DecodingSettings(max_tokens=8)))
    for r in range(rounds):
        for form in sides if r % 2 == 0 else sides[::-1]:
            for text, index in PROMPTS:
                constraint = None if form is None else Constraint(SCHEMAS[index], ENGINE, form)
                request = GenerationRequest(Prompt((Message("user", text),)),
                                            DecodingSettings(max_tokens=max_tokens), constraint)
                result = backend.generate(request)
                if result.finish_reason == "error":
                    cannot_measure(f"{_side_name(form)} failed: {result.error}")
                side = totals[_side_name(form)]
                side["tokens"] += result.completion_tokens
                side["seconds"] += result.seconds
                side["stopped"] += result.finish_reason == "stop"
    return {name: {**t, "tokens_per_s": t["tokens"] / t["seconds"] if t["seconds"] else 0.0}
            for name, t in totals.items()}


def compile_seconds(backend: Any) -> dict[str, float]:
    """Median seconds to compile each schema in each form (no cache)."""
    from conformbench.engines.base import engines

    engine = engines.get(ENGINE)()
    out: dict[str, float] = {}
    for form in FORMS:
        times = []
        for schema in SCHEMAS:
            start = time.perf_counter()
            engine.compile(schema, backend.vocabulary, form)
            times.append(time.perf_counter() - start)
        out[form] = median(times)
    return out


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--threads", type=int, default=threads_default())
    a = ap.parse_args()
    from conformbench.backends.base import backends
    from conformbench.engines.base import engines
    from conformbench.records.generation import BackendConfig

    if engines.get(ENGINE)().availability() is not None:
        cannot_measure(f"engine {ENGINE!r} is not installed")
    report = Report("grammar_overhead", "quick" if a.quick else "full")
    load_before = os.getloadavg()
    backend: Any = backends.get("llamacpp")(BackendConfig(threads=a.threads, n_ctx=2048))
    try:
        compiled = compile_seconds(backend)  # also builds the tokenizer bridge before timing
        rounds, max_tokens = (1, 64) if a.quick else (3, 128)
        speed = throughput(backend, rounds, max_tokens)
    finally:
        backend.close()
    load_after = os.getloadavg()
    report.measurements = {"throughput": speed, "compile_median_s": compiled,
                           "load_before": load_before, "load_after": load_after}
    report.notes.append(f"threads {a.threads}; {rounds} round(s) x {len(PROMPTS)} prompts per side, "
                        f"max_tokens {max_tokens}")
    report.notes.append("load average (1, 5, 15 min) before " + ", ".join(f"{x:.1f}" for x in load_before)
                        + "; after " + ", ".join(f"{x:.1f}" for x in load_after))
    for form, seconds in compiled.items():
        report.notes.append(f"compile median {ENGINE}/{form}: {seconds * 1000:.1f} ms")
    base = speed["unconstrained"]["tokens_per_s"]
    for form in FORMS:
        side = speed[_side_name(form)]
        info = " (info)" if form == "json" else ""
        report.add(Ratio(f"tokens/s constrained[{_side_name(form)}]/unconstrained{info}",
                         side["tokens_per_s"] / base if base else 0.0, TARGET, ">=",
                         f"{side['tokens_per_s']:.1f} vs {base:.1f} tokens/s; {side['tokens']:.0f} tokens, "
                         f"{side['stopped']:.0f}/{rounds * len(PROMPTS)} stopped"))
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
