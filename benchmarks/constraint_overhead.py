"""What a constraint costs: decoding tokens/s under each engine over
unconstrained decoding on the same prompts, and schema compile time per
engine over the dataset's schemas.

The measuring code is benchmarks/engines_speed.py (the runtime's own engine
benchmark): the same prompts and schemas on one llama.cpp backend, sides
(unconstrained, gbnf, llguidance, outlines, xgrammar when installed)
alternating every round, tokens/s = completion tokens / generation seconds;
compile times with no cache, one compile per engine and schema. This script
applies this issue's targets:

  constrained/unconstrained tokens/s   >= 0.95 for llguidance (others: info)
  compile time p95 per engine          <= 5 ms over the 602 dataset schemas
                                          (60 with --quick)

Run alone: python benchmarks/constraint_overhead.py [--quick] [--json out.json]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, cannot_measure, parser, threads_default

TARGET_ENGINE = "llguidance"
_NEEDED = ("installed_engines", "throughput", "compile_times", "dataset_schemas", "SPEED_SCHEMAS")


def engines_speed() -> Any:
    try:
        import engines_speed as es
    except ImportError as exc:
        cannot_measure(f"benchmarks/engines_speed.py cannot be imported: {exc}")
    missing = [name for name in _NEEDED if not hasattr(es, name)]
    if missing:
        cannot_measure(f"benchmarks/engines_speed.py lacks {', '.join(missing)}")
    return es


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--threads", type=int, default=threads_default())
    a = ap.parse_args()
    es = engines_speed()
    from conformbench.backends.base import backends
    from conformbench.engines.base import engines
    from conformbench.records.generation import BackendConfig

    names = es.installed_engines()
    if TARGET_ENGINE not in names:
        cannot_measure(f"engine {TARGET_ENGINE!r} is not installed (found: {', '.join(names) or 'none'})")
    n_schemas = 60 if a.quick else 602
    schemas = es.dataset_schemas(n_schemas)
    if schemas is None:
        cannot_measure("the dataset generator (conformbench.schemas.generator) is missing")
    report = Report("constraint_overhead", "quick" if a.quick else "full")
    backend: Any = backends.get("llamacpp")(BackendConfig(threads=a.threads, n_ctx=2048))
    try:
        for name in names:  # per-model tables (tokenizer bridges, vocabularies): not timed
            engines.get(name)().compile(es.SPEED_SCHEMAS[0], backend.vocabulary)
        rounds, max_tokens = (1, 64) if a.quick else (3, 128)
        speed = es.throughput(backend, names, rounds=rounds, max_tokens=max_tokens)
        compiled = es.compile_times(backend, names, schemas)
    finally:
        backend.close()
    report.measurements = {"throughput": speed, "compile": compiled, "schemas": len(schemas)}
    report.notes.append(f"threads {a.threads}; throughput: {rounds} round(s), max_tokens {max_tokens}, "
                        f"{len(names)} engines; compile: {len(schemas)} generated dataset schemas")
    base = speed["None"]["tokens_per_s"]
    for name in names:
        rate = speed[name]["tokens_per_s"]
        info = "" if name == TARGET_ENGINE else " (info)"
        report.add(Ratio(f"tokens/s constrained[{name}]/unconstrained{info}", rate / base if base else 0.0,
                         0.95, ">=", f"{rate:.1f} vs {base:.1f} tokens/s"))
    for name, c in compiled.items():
        if c["p95_s"] is None:
            report.notes.append(f"{name} compiled none of the schemas ({c['refused']} refused)")
            continue
        report.add(Ratio(f"compile p95 ms [{name}]", c["p95_s"] * 1000, 5.0, "<=",
                         f"p50 {c['p50_s'] * 1000:.2f} ms, refused {c['refused']}/{len(schemas)}"))
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
