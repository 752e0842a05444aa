"""Constraint engine speed on one llama.cpp runtime: decoding throughput
under each engine against unconstrained decoding on the same prompts, and
schema compile time per engine.

Throughput: the same prompts and schemas, sides (unconstrained, gbnf,
llguidance, outlines, xgrammar when installed) alternating every round;
tokens/s = completion tokens / generation seconds summed over all rounds.
Printed: engine/unconstrained tokens/s ratios (target >= 0.9: a constraint
should cost little per token).

Compile time: every engine compiles every schema of the set once (no cache),
p50/p95 seconds and refusals per engine. The set is the conformbench dataset
(602 generated schemas, `conformbench.schemas.generator`) when that module is
present, else the *.json files of --schemas DIR. outlines times include
moving the index from its build process; its builds stop at 60 s (refused).
A full run can take an hour on 2 cores: outlines builds some indexes slowly.

Run alone (llama.cpp slows many-fold when anything else shares the cores):
  python benchmarks/engines_speed.py [--quick] [--schemas DIR] [--json out.json]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Ratio, Report, cannot_measure, parser, percentile, threads_default

from conformbench.backends.base import backends
from conformbench.backends.llamacpp.backend import LlamaCppBackend
from conformbench.engines.base import engines
from conformbench.errors import UnsupportedSchemaError
from conformbench.records.generation import (
    BackendConfig,
    Constraint,
    DecodingSettings,
    GenerationRequest,
)
from conformbench.records.prompt import Message, Prompt

SPEED_SCHEMAS: list[dict[str, Any]] = [
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
            "city": {"type": "string", "maxLength": 40},
            "country": {"type": "string", "maxLength": 40},
            "population": {"type": "integer"},
            "landmarks": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 4},
        },
        "required": ["city", "country", "population", "landmarks"],
        "additionalProperties": False,
    },
]
SPEED_PROMPTS = [
    ("Describe a fictional person called Ada as JSON with her name, age and hobbies.", 0),
    ("Describe a retired sailor as JSON: name, age and hobbies.", 0),
    ("Give facts about Paris as JSON: city, country, population and landmarks.", 1),
    ("Give facts about Kyoto as JSON: city, country, population and landmarks.", 1),
]


def dataset_schemas(n: int) -> list[dict[str, Any]] | None:
    """The generated dataset's schemas, or None when the generator is absent."""
    try:
        from conformbench.schemas.config import load_config
        from conformbench.schemas.generator import generate
    except ImportError:
        return None
    return [g.schema for g in generate(n, 0, load_config(None))]


def directory_schemas(directory: Path) -> list[dict[str, Any]]:
    files = sorted(directory.glob("*.json"))
    if not files:
        cannot_measure(f"no *.json schema files in {directory}")
    return [json.loads(f.read_text(encoding="utf-8")) for f in files]


def installed_engines() -> list[str]:
    return [n for n in engines.names() if engines.get(n)().availability() is None and not n.startswith("test")]


def throughput(backend: LlamaCppBackend, names: list[str], rounds: int, max_tokens: int) -> dict[str, dict[str, float]]:
    sides: list[str | None] = [None, *names]
    totals = {str(s): {"tokens": 0.0, "seconds": 0.0} for s in sides}
    for r in range(rounds):
        for side in sides if r % 2 == 0 else sides[::-1]:
            for text, schema_index in SPEED_PROMPTS:
                constraint = Constraint(SPEED_SCHEMAS[schema_index], side) if side else None
                request = GenerationRequest(
                    Prompt((Message("user", text),)), DecodingSettings(max_tokens=max_tokens), constraint
                )
                result = backend.generate(request)
                totals[str(side)]["tokens"] += result.completion_tokens
                totals[str(side)]["seconds"] += result.seconds
    return {
        side: {**t, "tokens_per_s": t["tokens"] / t["seconds"] if t["seconds"] else 0.0}
        for side, t in totals.items()
    }


def compile_times(backend: LlamaCppBackend, names: list[str], schemas: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        engine = engines.get(name)()
        seconds: list[float] = []
        refused = 0
        for schema in schemas:
            start = time.perf_counter()
            try:
                engine.compile(schema, backend.vocabulary)
            except UnsupportedSchemaError:
                refused += 1
                continue
            seconds.append(time.perf_counter() - start)
        out[name] = {
            "compiled": len(seconds),
            "refused": refused,
            "p50_s": percentile(seconds, 50) if seconds else None,
            "p95_s": percentile(seconds, 95) if seconds else None,
        }
    return out


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--schemas", type=Path, default=None, help="directory of *.json schemas for compile times")
    ap.add_argument("--threads", type=int, default=threads_default())
    args = ap.parse_args()
    report = Report(script="engines_speed", mode="quick" if args.quick else "full")
    names = installed_engines()
    backend = backends.get("llamacpp")(BackendConfig(threads=args.threads, n_ctx=2048))
    if not isinstance(backend, LlamaCppBackend):  # engines compile against its llama.cpp runtime
        cannot_measure(f"backend 'llamacpp' is {type(backend).__name__}, not LlamaCppBackend")
    # first use builds per-model tables (llguidance tokenizer, outlines vocabulary): not timed
    for name in names:
        engines.get(name)().compile(SPEED_SCHEMAS[0], backend.vocabulary)

    speed = throughput(backend, names, rounds=1 if args.quick else 3, max_tokens=64 if args.quick else 128)
    report.measurements["throughput"] = speed
    base = speed["None"]["tokens_per_s"]
    for name in names:
        ratio = speed[name]["tokens_per_s"] / base if base else 0.0
        detail = f"{speed[name]['tokens_per_s']:.1f} vs {base:.1f} tokens/s"
        report.add(Ratio(f"tokens_per_s[{name}]/unconstrained", ratio, 0.9, ">=", detail))

    if args.schemas is not None:
        schemas, source = directory_schemas(args.schemas), str(args.schemas)
    else:
        generated = dataset_schemas(60 if args.quick else 602)
        if generated is None:
            cannot_measure("conformbench.schemas.generator is missing: pass --schemas DIR")
        schemas, source = generated, "conformbench.schemas.generator (seed 0, default config)"
    compiled = compile_times(backend, names, schemas)
    report.measurements["compile"] = {"schemas": len(schemas), "source": source, "engines": compiled}
    for name, c in compiled.items():
        p50 = "n/a" if c["p50_s"] is None else f"{c['p50_s'] * 1000:.1f} ms"
        p95 = "n/a" if c["p95_s"] is None else f"{c['p95_s'] * 1000:.1f} ms"
        print(f"COMPILE {name}: p50 {p50}, p95 {p95}, refused {c['refused']}/{len(schemas)}", flush=True)
    report.notes.append(f"threads={args.threads}; compile set: {len(schemas)} schemas from {source}")
    backend.close()
    return report.finish(args.json)


if __name__ == "__main__":
    raise SystemExit(main())
