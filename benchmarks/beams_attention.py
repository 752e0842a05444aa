"""The cost of ``--beams 3`` and ``--attention`` against greedy decoding,
on the same ConCodeEval-style prompts, measured side by side in one run
(interleaved rounds): wall seconds per side and the ratio to greedy.

    python benchmarks/beams_attention.py [--rounds 3] [--max-tokens 64]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from _common import embedded_model, interleave, machine, median, parser, threads_default

from conformbench.backends.llamacpp.backend import LlamaCppBackend
from conformbench.records.generation import BackendConfig, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt

SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                      "age": {"type": "integer", "minimum": 0}}, "required": ["name"]},
    {"type": "array", "items": {"type": "number", "multipleOf": 0.5}, "maxItems": 4},
    {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]{3}$"},
                                      "tags": {"type": "array", "uniqueItems": True}}},
]


def _requests(max_tokens: int, **settings: object) -> list[GenerationRequest]:
    out = []
    for schema in SCHEMAS:
        text = json.dumps(schema, indent=2)
        prompt = Prompt((Message("user", f"Write a JSON sample valid for this schema:\n{text}\nSample:"),))
        out.append(GenerationRequest(prompt, DecodingSettings(max_tokens=max_tokens, **settings),  # type: ignore[arg-type]
                                     attend=text))
    return out


def main() -> None:
    args_parser = parser(__doc__)
    args_parser.add_argument("--rounds", type=int, default=3)
    args_parser.add_argument("--max-tokens", type=int, default=64)
    args = args_parser.parse_args()
    backend = LlamaCppBackend(BackendConfig(model=str(embedded_model()), threads=threads_default(), n_ctx=2048))
    sides: dict[str, list[GenerationRequest]] = {
        "greedy": _requests(args.max_tokens),
        "beams 3": _requests(args.max_tokens, beams=3),
        "attention": _requests(args.max_tokens, attention=True),
    }

    def side(requests: list[GenerationRequest]) -> Callable[[], object]:
        return lambda: [backend.generate(r) for r in requests]

    times = interleave({name: side(reqs) for name, reqs in sides.items()}, args.rounds)
    base = median(times["greedy"])
    print(f"machine: {json.dumps(machine())}")
    print(f"{len(SCHEMAS)} prompts x {args.max_tokens} max new tokens, {args.rounds} interleaved rounds")
    for name, walls in times.items():
        print(f"{name:10s} median {median(walls):7.2f} s   x{median(walls) / base:5.2f} vs greedy")
    backend.close()


if __name__ == "__main__":
    main()
