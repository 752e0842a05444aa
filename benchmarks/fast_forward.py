"""Grammar fast-forward (extra fast_forward = true) against the plain masked
decoder of the llamacpp backend, on the same constrained requests.

Work: the first K BFCL v3 simple items under constrained[arguments] and the
first K GSM8K problems under constrained[answer] and constrained[reasoning],
llguidance, greedy, max_tokens M. Two backends load the same model file
with the same threads; they differ only in fast_forward. Sides alternate
every round.

Printed: the identical-output rate (same text and finish reason; forced
tokens are the grammar's canonical tokenization, where the model may have
chosen other tokens for the same text, and tokens decoded together need
not get bit-identical logits), completion tokens per second fast-forward
over plain (target >= 1.0 where outputs are identical; info otherwise), and
the share of output tokens that were forced.

Run alone: python benchmarks/fast_forward.py [--quick] [--k K] [--json out.json]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, embedded_model, interleave, median, parser, require, threads_default


def requests(k: int, max_tokens: int) -> list[Any]:
    from conformbench.records.generation import Constraint, DecodingSettings, GenerationRequest
    from conformbench.records.items import Condition, TaskOptions
    from conformbench.tasks.base import tasks

    work = [("bfcl-simple", "arguments"), ("gsm8k", "answer"), ("gsm8k", "reasoning")]
    out = []
    for name, contract in work:
        task = tasks.get(name)(TaskOptions(n=k))
        cond = Condition("constrained", contract=contract, engine="llguidance")
        for item in task.items():
            schema = task.contract_schema(item, cond)
            assert schema is not None
            out.append(GenerationRequest(task.prompt(item, cond), DecodingSettings(max_tokens=max_tokens),
                                         Constraint(schema, "llguidance")))
    return out


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--k", type=int, default=None, help="items per task and contract (quick 4, full 16)")
    ap.add_argument("--max-tokens", type=int, default=None, help="quick 128, full 384 (validbutwrong's)")
    ap.add_argument("--threads", type=int, default=threads_default())
    a = ap.parse_args()
    k, max_tokens = a.k or (4 if a.quick else 16), a.max_tokens or (128 if a.quick else 384)
    require("llama_cpp", "llguidance")
    from conformbench.backends.base import backends
    from conformbench.records.generation import BackendConfig

    model = str(embedded_model())
    report = Report("fast_forward", "quick" if a.quick else "full")
    report.notes.append(f"K={k} items x 3 (bfcl arguments, gsm8k answer, gsm8k reasoning), llguidance, "
                        f"max_tokens {max_tokens}, threads {a.threads}, greedy")
    plain = backends.get("llamacpp")(BackendConfig(model=model, threads=a.threads))
    forward = backends.get("llamacpp")(BackendConfig(model=model, threads=a.threads, extra={"fast_forward": True}))
    reqs = requests(k, max_tokens)
    outputs: dict[str, list[list[tuple[str, str, int]]]] = {"plain": [], "fast-forward": []}

    def side(name: str, backend: Any) -> Any:
        def run() -> None:
            results = backend.generate_many(reqs)
            outputs[name].append([(r.text, r.finish_reason, r.completion_tokens) for r in results])
        return run

    try:
        for backend in (plain, forward):  # warm up untimed: compile caches, tokenizer bridge
            backend.generate_many(reqs[:1])
        times = interleave({"plain": side("plain", plain), "fast-forward": side("fast-forward", forward)},
                           1 if a.quick else 2)
        counters = forward.forward
    finally:
        plain.close()
        forward.close()
    first_plain, first_ff = outputs["plain"][0], outputs["fast-forward"][0]
    same = sum(p[:2] == f[:2] for p, f in zip(first_plain, first_ff, strict=True))
    differing = [i for i, (p, f) in enumerate(zip(first_plain, first_ff, strict=True)) if p[:2] != f[:2]]
    tokens_plain = sum(p[2] for p in first_plain)
    tokens_ff = sum(f[2] for f in first_ff)
    t_plain, t_ff = median(times["plain"]), median(times["fast-forward"])
    print(f"  {len(reqs)} requests: plain {t_plain:.2f} s ({tokens_plain} tokens), fast-forward {t_ff:.2f} s "
          f"({tokens_ff} tokens); differing requests {differing}", flush=True)
    report.measurements = {"requests": len(reqs), "seconds": times, "differing": differing,
                           "tokens": {"plain": tokens_plain, "fast_forward": tokens_ff},
                           "counters": vars(counters) if counters else None}
    report.add(Ratio("identical-output rate fast-forward/plain", same / len(reqs), 1.0, ">=",
                     f"{same} of {len(reqs)}"))
    if counters is not None and tokens_ff:
        report.notes.append(f"forced tokens: {counters.forced_tokens} over all rounds "
                            f"({counters.forced_tokens / (tokens_ff * len(outputs['fast-forward'])):.1%} of output tokens)")
    speed = (tokens_ff / t_ff) / (tokens_plain / t_plain)
    name = "tokens/s fast-forward/plain" + ("" if not differing else " (outputs differ: info)")
    report.add(Ratio(name, speed, 1.0 if not differing else float("inf"), ">=",
                     f"{tokens_ff / t_ff:.1f} vs {tokens_plain / t_plain:.1f} tokens/s"))
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
