"""KV-cache prefix reuse of the llamacpp backend: prompt tokens evaluated
and wall time with reuse on against the same work with reuse off.

Work: the arms workload, the first K GSM8K items (or BFCL simple) x every
arm of the task (unconstrained, prompt_only[S], constrained[S]@llguidance,
reason_then_constrain[answer]@llguidance), in the runner's unit order (the
conditions of one item together, each two-turn arm right after the
free-text generation it reuses), greedy, through the llamacpp backend with
``BackendConfig.extra = {"prefix_reuse": true | false}``. Each round loads a
fresh backend per side (empty KV cache; load and constraint compiles are not
timed) and the sides alternate every round.

Printed: prompt tokens evaluated with reuse over without (the backend's
counters, cross-checked against llama.cpp's own ``llama_perf_context``),
wall-time ratio on/off, and llama.cpp's prompt-evaluation milliseconds
on/off. Reuse must not change the outputs (the backend cuts the reused prefix
so that the batches match a fresh evaluation); the script checks that both
sides wrote the same texts. No target was set: 1.0 (reuse costs nothing) is
printed as the bar.

Run alone (llama.cpp slows many-fold when anything else shares the cores):
  python benchmarks/kv_reuse.py [--quick] [--k K] [--max-tokens M] [--task gsm8k|bfcl-simple]
                                [--threads T] [--json out.json]
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    Ratio,
    Report,
    cannot_measure,
    embedded_model,
    parser,
    require,
    threads_default,
)

if TYPE_CHECKING:
    from conformbench.backends.llamacpp.backend import LlamaCppBackend
    from conformbench.records.spec import RunSpec
    from conformbench.runner.units import TaskPlan

LABEL = "smollm2"
ENGINE = "llguidance"
N_CTX = 4096


@dataclass(frozen=True)
class Setup:
    model: Path
    task: str
    k: int
    max_tokens: int
    threads: int


@dataclass
class Side:
    """What one side measured, summed over its rounds."""

    seconds: list[float] = field(default_factory=list)
    prompt_tokens: int = 0
    reused: int = 0
    #: llama.cpp's own counters: tokens and milliseconds of prompt evaluation
    p_eval_tokens: int = 0
    p_eval_ms: float = 0.0
    generations: int = 0
    texts: list[list[str]] = field(default_factory=list)

    @property
    def evaluated(self) -> int:
        return self.prompt_tokens - self.reused


def spec_for(setup: Setup, reuse: bool) -> RunSpec:
    from conformbench.runner.spec import parse_spec

    return parse_spec({
        "models": [{"label": LABEL, "backend": "llamacpp", "model": str(setup.model),
                    "threads": setup.threads, "n_ctx": N_CTX, "extra": {"prefix_reuse": reuse}}],
        "tasks": [{"name": setup.task, "n": setup.k, "engines": [ENGINE]}],
        "decoding": {"max_tokens": setup.max_tokens, "temperature": 0.0},
        "out": "unused", "quiet": True, "canary": False,
    }, "kv_reuse benchmark spec")


def load_backend(spec: RunSpec) -> LlamaCppBackend:
    from conformbench.backends.base import backends
    from conformbench.backends.llamacpp.backend import LlamaCppBackend

    backend = backends.get("llamacpp")(spec.models[0].backend_config())
    if not isinstance(backend, LlamaCppBackend):  # the counters are this class's
        cannot_measure(f"backend 'llamacpp' is {type(backend).__name__}, not LlamaCppBackend")
    return backend


def precompile(backend: LlamaCppBackend, plan: TaskPlan) -> None:
    """Compile every constraint of the work before the clock starts (the
    llguidance tokenizer build and schema compiles cost both sides alike)."""
    from conformbench.runner.units import final_request

    for unit in plan.units(LABEL):
        request = final_request(plan, unit, "")
        if request.constraint is not None:
            backend.compile(request.constraint)


def generate_all(backend: LlamaCppBackend, plan: TaskPlan) -> list[str]:
    """Every unit's first answer in the runner's order; a turn that is the
    same request as an earlier one (reason_then_constrain's free step is
    the unconstrained answer) is taken from it, as the runner does."""
    from conformbench.runner.units import final_request, first_plan, first_turn, request_fingerprint

    made: dict[str, str] = {}
    texts: dict[tuple[str, str, str, str], str] = {}
    for unit in plan.units(LABEL):
        first = first_turn(plan, unit)
        key = request_fingerprint(first)
        if key not in made:
            result = backend.generate(first)
            if result.finish_reason == "error":
                cannot_measure(f"generation {'/'.join(unit.key)} failed: {result.error}")
            made[key] = result.text
        text = made[key]
        turn = first_plan(plan, unit)
        if turn is not None and not turn.answer:  # a step: the answer packages its text
            result = backend.generate(final_request(plan, unit, text))
            if result.finish_reason == "error":
                cannot_measure(f"generation {'/'.join(unit.key)} failed: {result.error}")
            text = result.text
        texts[unit.key] = text
    return list(texts.values())


def one_round(setup: Setup, reuse: bool, side: Side) -> None:
    import llama_cpp

    from conformbench.runner.run import build_plans

    spec = spec_for(setup, reuse)
    plan = build_plans(spec)[0]
    backend = load_backend(spec)
    try:
        precompile(backend, plan)
        ctx: Any = backend.vocabulary.llm.ctx
        llama_cpp.llama_perf_context_reset(ctx)
        start = time.perf_counter()
        side.texts.append(generate_all(backend, plan))
        side.seconds.append(time.perf_counter() - start)
        perf = llama_cpp.llama_perf_context(ctx)
        side.p_eval_tokens += int(perf.n_p_eval)
        side.p_eval_ms += float(perf.t_p_eval_ms)
        side.prompt_tokens += backend.counters.prompt_tokens_total
        side.reused += backend.counters.prefix_tokens_reused
        side.generations += backend.counters.model_calls
    finally:
        backend.close()


def measure(setup: Setup, rounds: int) -> dict[str, Side]:
    sides = {"on": Side(), "off": Side()}
    for r in range(rounds):
        order = ("on", "off") if r % 2 == 0 else ("off", "on")
        for name in order:
            one_round(setup, name == "on", sides[name])
            print(f"  round {r + 1} reuse {name:3s} {sides[name].seconds[-1]:7.2f} s", flush=True)
    return sides


def record(report: Report, sides: dict[str, Side]) -> None:
    on, off = sides["on"], sides["off"]
    same = on.texts == off.texts
    report.notes.append(f"{on.generations // len(on.seconds)} generations per round "
                        f"(first turns of two-turn arms included); outputs identical on/off: {same}")
    if not same:
        report.notes.append("OUTPUTS DIFFER: prefix reuse changed what the model wrote")
    report.notes.append(f"prompt tokens per side over {len(on.seconds)} rounds: {on.prompt_tokens}; "
                        f"reused with reuse on: {on.reused} "
                        f"({on.reused / max(on.prompt_tokens, 1):.1%}); llama.cpp prompt-eval tokens "
                        f"on/off: {on.p_eval_tokens}/{off.p_eval_tokens}")
    report.measurements = {
        name: {"seconds": s.seconds, "prompt_tokens": s.prompt_tokens, "reused": s.reused,
               "evaluated": s.evaluated, "llama_p_eval_tokens": s.p_eval_tokens,
               "llama_p_eval_ms": s.p_eval_ms, "generations": s.generations}
        for name, s in sides.items()} | {"outputs_identical": same}
    evaluated = on.evaluated / max(off.evaluated, 1)
    report.add(Ratio("prompt tokens evaluated reuse-on/reuse-off", evaluated, 1.0, "<=",
                     f"{on.evaluated} vs {off.evaluated}; saved {1 - evaluated:.1%}"))
    report.add(Ratio("prompt-eval ms (llama.cpp) reuse-on/reuse-off", on.p_eval_ms / max(off.p_eval_ms, 1e-9),
                     1.0, "<=", f"{on.p_eval_ms:.0f} vs {off.p_eval_ms:.0f} ms"))
    t_on, t_off = statistics.median(on.seconds), statistics.median(off.seconds)
    report.add(Ratio("wall time reuse-on/reuse-off", t_on / t_off, 1.0, "<=",
                     f"median {t_on:.2f} vs {t_off:.2f} s per round"))


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--k", type=int, default=None, help="items (quick 5, full 20)")
    ap.add_argument("--max-tokens", type=int, default=None, help="quick 64, full 256 (the arms specs')")
    ap.add_argument("--task", choices=("gsm8k", "bfcl-simple"), default="gsm8k")
    ap.add_argument("--threads", type=int, default=threads_default())
    a = ap.parse_args()
    require("llama_cpp", "llguidance")
    setup = Setup(embedded_model(), a.task, a.k or (5 if a.quick else 20),
                  a.max_tokens or (64 if a.quick else 256), a.threads)
    report = Report("kv_reuse", "quick" if a.quick else "full")
    report.notes.append(f"{setup.task}: {setup.k} items x every arm ({ENGINE}), greedy, max_tokens "
                        f"{setup.max_tokens}, threads {setup.threads}, n_ctx {N_CTX}")
    record(report, measure(setup, 2 if a.quick else 4))
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
