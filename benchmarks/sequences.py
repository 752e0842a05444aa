"""One prompt, many sequences: what beams and samples cost against one
greedy sequence on the same items, measured side by side in one run
(interleaved rounds, the llamacpp backend as `conformbench run` drives it).

  greedy      one greedy generation per prompt
  beams 3     --beams 3 (beam search over sequences forked from one prefill)
  1 sample    one generation at --temperature T, seed s
  4 samples   four generations at T, seeds s..s+3 (as --samples 4 records them)

Targets (issue #32): beams 3 wall <= 1.6x greedy; 4 samples <= 2x one sample.
Also checked: beams 1 texts equal greedy texts (the same decoding path).

    python benchmarks/sequences.py [--quick] [--rounds R] [--max-tokens M] [--json out.json]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, embedded_model, interleave, median, parser, require, threads_default

SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                      "age": {"type": "integer", "minimum": 0}}, "required": ["name"]},
    {"type": "array", "items": {"type": "number", "multipleOf": 0.5}, "maxItems": 4},
    {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]{3}$"},
                                      "tags": {"type": "array", "uniqueItems": True}}},
    {"type": "object", "properties": {"city": {"enum": ["Oslo", "Rome"]}, "n": {"type": "integer"}}},
]


def requests(max_tokens: int) -> list[Any]:
    from conformbench.records.generation import DecodingSettings, GenerationRequest
    from conformbench.records.prompt import Message, Prompt

    out = []
    for schema in SCHEMAS:
        text = json.dumps(schema, indent=2)
        prompt = Prompt((Message("user", f"Write a JSON sample valid for this schema:\n{text}\nSample:"),))
        out.append(GenerationRequest(prompt, DecodingSettings(max_tokens=max_tokens)))
    return out


def settings(reqs: list[Any], **changes: Any) -> list[Any]:
    return [replace(r, settings=replace(r.settings, **changes)) for r in reqs]


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (quick 1, full 3)")
    ap.add_argument("--max-tokens", type=int, default=None, help="quick 48, full 128")
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--threads", type=int, default=threads_default())
    a = ap.parse_args()
    rounds, max_tokens = a.rounds or (1 if a.quick else 3), a.max_tokens or (48 if a.quick else 128)
    require("llama_cpp")
    from conformbench.backends.llamacpp.backend import LlamaCppBackend
    from conformbench.records.generation import BackendConfig

    report = Report("sequences", "quick" if a.quick else "full")
    report.notes.append(f"{len(SCHEMAS)} prompts, max_tokens {max_tokens}, temperature {a.temperature} for "
                        f"samples, {rounds} interleaved rounds, threads {a.threads}")
    backend = LlamaCppBackend(BackendConfig(model=str(embedded_model()), threads=a.threads, n_ctx=2048))
    base = requests(max_tokens)
    work: dict[str, list[Any]] = {
        "greedy": base,
        "beams 1": settings(base, beams=1),
        "beams 3": settings(base, beams=3),
        "1 sample": settings(base, temperature=a.temperature),
        "4 samples": [r for s in range(4) for r in settings(base, temperature=a.temperature, seed=s)],
    }
    texts: dict[str, list[str]] = {}

    def side(name: str) -> Callable[[], None]:
        def run() -> None:
            texts[name] = [backend.generate(r).text for r in work[name]]
        return run

    try:
        backend.generate(settings(base[:1], max_tokens=2)[0])  # warm-up, untimed
        times = interleave({name: side(name) for name in work}, rounds)
    finally:
        backend.close()
    wall = {name: median(t) for name, t in times.items()}
    for name, seconds in wall.items():
        print(f"  {name:10s} median {seconds:7.2f} s", flush=True)
    report.measurements = {"seconds": times, "texts": texts}
    same = sum(x == y for x, y in zip(texts["greedy"], texts["beams 1"]))
    report.add(Ratio("beams 1 texts equal to greedy", same / len(base), 1.0, ">=", f"{same} of {len(base)}"))
    report.add(Ratio("wall beams 3 / greedy", wall["beams 3"] / wall["greedy"], 1.6, "<=", "same prompts"))
    report.add(Ratio("wall 4 samples / 1 sample", wall["4 samples"] / wall["1 sample"], 2.0, "<=",
                     "4 sequences per prompt, one at a time (no batched sampling yet)"))
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
