"""The cost of ``--beams 3`` and ``--attention`` against greedy decoding,
on the same ConCodeEval-style prompts, measured side by side in one run
(interleaved rounds): wall seconds per side and the ratio to greedy.

    python benchmarks/beams_attention.py [--rounds 3] [--max-tokens 64]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from _common import embedded_model, interleave, machine, median, parser, threads_default
from _schema_prompts import SCHEMAS, schema_requests

from conformbench.backends.llamacpp.backend import LlamaCppBackend
from conformbench.records.generation import BackendConfig, GenerationRequest


def main() -> None:
    args_parser = parser(__doc__)
    args_parser.add_argument("--rounds", type=int, default=3)
    args_parser.add_argument("--max-tokens", type=int, default=64)
    args = args_parser.parse_args()
    backend = LlamaCppBackend(BackendConfig(model=str(embedded_model()), threads=threads_default(), n_ctx=2048))
    sides: dict[str, list[GenerationRequest]] = {
        "greedy": schema_requests(SCHEMAS[:3], args.max_tokens),
        "beams 3": schema_requests(SCHEMAS[:3], args.max_tokens, beams=3),
        "attention": schema_requests(SCHEMAS[:3], args.max_tokens, attention=True),
    }

    def side(requests: list[GenerationRequest]) -> Callable[[], object]:
        return lambda: [backend.generate(r) for r in requests]

    times = interleave({name: side(reqs) for name, reqs in sides.items()}, args.rounds)
    base = median(times["greedy"])
    print(f"machine: {json.dumps(machine())}")
    print(f"{len(SCHEMAS[:3])} prompts x {args.max_tokens} max new tokens, {args.rounds} interleaved rounds")
    for name, walls in times.items():
        print(f"{name:10s} median {median(walls):7.2f} s   x{median(walls) / base:5.2f} vs greedy")
    backend.close()


if __name__ == "__main__":
    main()
