"""What a repair round costs on llama.cpp with and without KV-cache prefix
reuse: prompt tokens evaluated and seconds per round, side by side.

Work: the first K GSM8K items under repair[answer] (prompt_only's turn,
then while invalid a follow-up quoting the validator's errors, the earlier
turns kept), at most R rounds, greedy, each item's rounds one after the
other as the runner takes them (the conversation so far is the prefix of
the next round's prompt), through the llamacpp backend with
``BackendConfig.extra = {"prefix_reuse": true | false}``. Each side loads a
fresh backend (empty KV cache; the load is not timed); the sides alternate.

Printed per round: prompts, prompt tokens, tokens evaluated (the backend's
counters: prompt tokens minus the reused prefix) and seconds, reuse on and
off; then the ratios evaluated on/off and seconds on/off over the repair
rounds (round 2 on). Reuse must not change the outputs: the script checks
that both sides wrote the same texts.

Run alone (llama.cpp slows many-fold when anything else shares the cores):
  python benchmarks/repair_rounds.py [--quick] [--k K] [--rounds R] [--max-tokens M]
                                     [--threads T] [--json out.json]
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, cannot_measure, embedded_model, parser, require, threads_default

LABEL = "smollm2"
N_CTX = 4096


@dataclass(frozen=True)
class Setup:
    model: Path
    k: int
    rounds: int
    max_tokens: int
    threads: int


@dataclass
class PerRound:
    prompts: int = 0
    prompt_tokens: int = 0
    evaluated: int = 0
    seconds: float = 0.0


@dataclass
class Side:
    rounds: dict[int, PerRound] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)


def _plan(setup: Setup) -> Any:
    from conformbench.records.generation import DecodingSettings, TurnBudgets
    from conformbench.records.items import TaskOptions
    from conformbench.runner.units import plan_task
    from conformbench.tasks.base import tasks

    task = tasks.get("gsm8k")(TaskOptions(n=setup.k, arms=("repair[answer]",)))
    budgets = TurnBudgets(setup.max_tokens, setup.max_tokens, setup.max_tokens)
    return plan_task(task, DecodingSettings(max_tokens=setup.max_tokens), budgets, max_rounds=setup.rounds)


def _backend(setup: Setup, reuse: bool) -> Any:
    from conformbench.backends.base import backends
    from conformbench.records.generation import BackendConfig

    return backends.get("llamacpp")(BackendConfig(model=str(setup.model), threads=setup.threads, n_ctx=N_CTX,
                                                  extra={"prefix_reuse": reuse}))


def one_side(setup: Setup, reuse: bool) -> Side:
    """Every item's repair rounds, as the runner takes them."""
    from conformbench.runner.turns import outcome_of
    from conformbench.runner.units import UnitContext, request_for

    plan, side = _plan(setup), Side()
    backend = _backend(setup, reuse)
    try:
        for unit in plan.units(LABEL):
            ctx, turns = UnitContext(plan, unit), list[Any]()
            while (turn := unit.arm.decide(ctx, tuple(turns))) is not None:
                before = (backend.counters.prompt_tokens_total, backend.counters.prefix_tokens_reused)
                start = time.perf_counter()
                result = backend.generate(request_for(plan, unit, turn))
                seconds = time.perf_counter() - start
                if result.finish_reason == "error":
                    cannot_measure(f"generation {'/'.join(unit.key)} failed: {result.error}")
                tokens = backend.counters.prompt_tokens_total - before[0]
                reused = backend.counters.prefix_tokens_reused - before[1]
                row = side.rounds.setdefault(len(turns), PerRound())
                row.prompts += 1
                row.prompt_tokens += tokens
                row.evaluated += tokens - reused
                row.seconds += seconds
                side.texts.append(result.text)
                turns.append(outcome_of(plan, unit, turn, result.text, result.finish_reason))
    finally:
        backend.close()
    return side


def record(report: Report, on: Side, off: Side) -> None:
    same = on.texts == off.texts
    report.notes.append(f"{len(on.texts)} generations per side; outputs identical on/off: {same}")
    if not same:
        report.notes.append("OUTPUTS DIFFER: prefix reuse changed what the model wrote")
    print(f"{'round':>5} {'prompts':>7} {'prompt tok':>10} {'eval on':>8} {'eval off':>8} "
          f"{'s on':>7} {'s off':>7}")
    for r in sorted(on.rounds):
        a, b = on.rounds[r], off.rounds.get(r, PerRound())
        line = (f"{r + 1:>5} {a.prompts:>7} {a.prompt_tokens:>10} {a.evaluated:>8} {b.evaluated:>8} "
                f"{a.seconds:>7.2f} {b.seconds:>7.2f}")
        print(line)
        report.notes.append(f"round {r + 1}: {a.prompts} prompts, {a.prompt_tokens} prompt tokens, evaluated "
                            f"{a.evaluated} reuse on / {b.evaluated} off, {a.seconds:.2f} s on / {b.seconds:.2f} s off")
    report.measurements = {name: {str(r + 1): vars(x) for r, x in s.rounds.items()}
                           for name, s in (("on", on), ("off", off))} | {"outputs_identical": same}
    later = [r for r in on.rounds if r > 0]
    if not later:
        report.notes.append("no item needed a repair round: nothing to compare")
        return
    ev_on = sum(on.rounds[r].evaluated for r in later)
    ev_off = sum(off.rounds[r].evaluated for r in later if r in off.rounds)
    s_on = sum(on.rounds[r].seconds for r in later)
    s_off = sum(off.rounds[r].seconds for r in later if r in off.rounds)
    report.add(Ratio("repair rounds: prompt tokens evaluated reuse-on/reuse-off", ev_on / max(ev_off, 1), 1.0,
                     "<=", f"{ev_on} vs {ev_off}"))
    report.add(Ratio("repair rounds: seconds reuse-on/reuse-off", s_on / max(s_off, 1e-9), 1.0, "<=",
                     f"{s_on:.2f} vs {s_off:.2f} s"))


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--k", type=int, default=None, help="items (quick 3, full 10)")
    ap.add_argument("--rounds", type=int, default=3, help="--max-rounds (default 3)")
    ap.add_argument("--max-tokens", type=int, default=None, help="budget of every turn (quick 64, full 128)")
    ap.add_argument("--threads", type=int, default=threads_default())
    a = ap.parse_args()
    require("llama_cpp")
    setup = Setup(embedded_model(), a.k or (3 if a.quick else 10), a.rounds,
                  a.max_tokens or (64 if a.quick else 128), a.threads)
    report = Report("repair_rounds", "quick" if a.quick else "full")
    report.notes.append(f"gsm8k: {setup.k} items x repair[answer], at most {setup.rounds} rounds, greedy, "
                        f"max_tokens {setup.max_tokens}, threads {setup.threads}, n_ctx {N_CTX}")
    off = one_side(setup, reuse=False)
    on = one_side(setup, reuse=True)
    record(report, on, off)
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
