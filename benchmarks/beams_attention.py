"""The cost of ``--beams 3`` and ``--attention`` against greedy decoding,
on the same ConCodeEval-style prompts, measured side by side in one run
(interleaved rounds): wall seconds per side and the ratio to greedy.

Targets: beams 3 <= 1.6x greedy (issue #32; on a compute-bound CPU the raw
3-row step bounds it, see sequences.py), attention <= 1.2x greedy (one more
prompt evaluation beside the same greedy decoding).

    python benchmarks/beams_attention.py [--quick] [--rounds 3] [--max-tokens 64] [--json out.json]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, embedded_model, interleave, median, parser, require, threads_default
from _schema_prompts import SCHEMAS, schema_requests


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (quick 1, full 3)")
    ap.add_argument("--max-tokens", type=int, default=None, help="quick 32, full 64")
    a = ap.parse_args()
    rounds, max_tokens = a.rounds or (1 if a.quick else 3), a.max_tokens or (32 if a.quick else 64)
    require("llama_cpp")
    from conformbench.backends.llamacpp.backend import LlamaCppBackend
    from conformbench.records.generation import BackendConfig, GenerationRequest

    prompts = SCHEMAS[:3]
    report = Report("beams_attention", "quick" if a.quick else "full")
    report.notes.append(f"{len(prompts)} prompts x {max_tokens} max new tokens, {rounds} interleaved rounds")
    backend = LlamaCppBackend(BackendConfig(model=str(embedded_model()), threads=threads_default(), n_ctx=2048))
    sides: dict[str, list[GenerationRequest]] = {
        "greedy": schema_requests(prompts, max_tokens),
        "beams 3": schema_requests(prompts, max_tokens, beams=3),
        "attention": schema_requests(prompts, max_tokens, attention=True),
    }

    def side(requests: list[GenerationRequest]) -> Callable[[], object]:
        return lambda: [backend.generate(r) for r in requests]

    try:
        times = interleave({name: side(reqs) for name, reqs in sides.items()}, rounds)
    finally:
        backend.close()
    wall = {name: median(t) for name, t in times.items()}
    for name, seconds in wall.items():
        print(f"  {name:10s} median {seconds:7.2f} s", flush=True)
    report.measurements = {"seconds": times}
    report.add(Ratio("wall beams 3 / greedy", wall["beams 3"] / wall["greedy"], 1.6, "<=", "same prompts"))
    report.add(Ratio("wall attention / greedy", wall["attention"] / wall["greedy"], 1.2, "<=",
                     "greedy decoding plus the attention capture"))
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
