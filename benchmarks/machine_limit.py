"""End-to-end generation speed through conformbench against raw llama.cpp
decoding of the same prompts: how close conformbench gets to the machine's
limit.

Work: the first K GSM8K problems, unconstrained arm (free text, so no
constraint engine is involved), greedy, the same max_tokens, the same model
file, n_ctx and thread count on both sides.

  conformbench  runner.run.execute(spec) in process: backend load, prompt
                rendering, generation, replay writing (fresh output directory
                every round); also the backend alone (generate_many)
  raw           one llama_cpp.Llama; for each prompt (the same token ids the
                backend decoded) Llama.generate with the same greedy sampler
                until an end-of-generation token or max_tokens

Both sides must generate the same number of tokens per prompt (greedy on the
same tokens); the script checks that and says so if not. Printed: completion
tokens/s of conformbench over raw (target >= 0.9), rounds interleaved.

Run: python benchmarks/machine_limit.py [--quick] [--json out.json]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    Ratio,
    Report,
    cannot_measure,
    embedded_model,
    interleave,
    median,
    parser,
    threads_default,
)

N_CTX = 4096


@dataclass(frozen=True)
class Setup:
    model: Path
    k: int
    max_tokens: int
    threads: int


def spec_for(setup: Setup, out: Path) -> Any:
    from conformbench.runner.spec import parse_spec

    return parse_spec({
        "models": [{"label": "smollm2", "backend": "llamacpp", "model": str(setup.model),
                    "threads": setup.threads, "n_ctx": N_CTX}],
        "tasks": [{"name": "gsm8k", "n": setup.k, "arms": ["unconstrained"]}],
        "decoding": {"max_tokens": setup.max_tokens, "temperature": 0.0},
        "out": str(out), "quiet": True,
    })


def runner_side(setup: Setup, work: Path, counts: list[list[int]]) -> Callable[[], None]:
    from conformbench.records.replay_file import read_replay
    from conformbench.runner.run import execute

    def run() -> None:
        out = work / "runner"
        shutil.rmtree(out, ignore_errors=True)
        summary = execute(spec_for(setup, out))
        gens = read_replay(summary.replay).generations
        counts.append([g.completion_tokens for g in gens])

    return run


def prompts(setup: Setup) -> list[list[int]]:
    """The token ids the backend decodes for each unconstrained prompt."""
    from conformbench.backends.base import backends
    from conformbench.runner.run import build_plans

    plan = build_plans(spec_for(setup, Path(tempfile.gettempdir())))[0]
    backend: Any = backends.get("llamacpp")(spec_for(setup, Path(".")).models[0].backend_config())
    try:
        return [backend.tokenize_prompt(plan.task.prompt(item, plan.conditions[0])) for item in plan.items]
    finally:
        backend.close()


def backend_side(setup: Setup, requests: list[Any], counts: list[list[int]]) -> Callable[[], None]:
    from conformbench.backends.base import backends

    backend: Any = backends.get("llamacpp")(spec_for(setup, Path(".")).models[0].backend_config())

    def run() -> None:
        backend._llm.reset()  # no KV cache carried over from the previous round
        counts.append([r.completion_tokens for r in backend.generate_many(requests)])

    return run


def raw_side(setup: Setup, token_lists: list[list[int]], counts: list[list[int]]) -> Callable[[], None]:
    import llama_cpp

    from conformbench.backends.llamacpp.amx import loading_for_this_build

    with loading_for_this_build():  # the backend's kernels (amx.py): no AMX crash, a fair ratio
        llm = llama_cpp.Llama(model_path=str(setup.model), n_ctx=N_CTX, n_threads=setup.threads,
                              n_threads_batch=setup.threads, seed=0, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)

    def run() -> None:
        llm.reset()  # type: ignore[no-untyped-call]
        out = []
        for tokens in token_lists:
            n = 0
            for tok in llm.generate(tokens, temp=0.0):
                if llama_cpp.llama_vocab_is_eog(vocab, tok):
                    break
                n += 1
                if n >= setup.max_tokens:
                    break
            out.append(n)
        counts.append(out)

    return run


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--k", type=int, default=None, help="prompts (quick 6, full 20)")
    ap.add_argument("--max-tokens", type=int, default=None, help="quick 128, full 256")
    ap.add_argument("--threads", type=int, default=threads_default())
    a = ap.parse_args()
    setup = Setup(embedded_model(), a.k or (6 if a.quick else 20),
                  a.max_tokens or (128 if a.quick else 256), a.threads)
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        cannot_measure("llama-cpp-python is not importable")
    report = Report("machine_limit", "quick" if a.quick else "full")
    report.notes.append(f"{setup.k} GSM8K prompts, unconstrained, greedy, max_tokens {setup.max_tokens}, "
                        f"threads {setup.threads}, n_ctx {N_CTX}")
    work = Path(tempfile.mkdtemp(prefix="cb-machine-limit-"))
    counts: dict[str, list[list[int]]] = {"runner": [], "backend": [], "raw": []}
    try:
        from conformbench.records.generation import DecodingSettings, GenerationRequest
        from conformbench.runner.run import build_plans

        plan = build_plans(spec_for(setup, work))[0]
        requests = [GenerationRequest(plan.task.prompt(i, plan.conditions[0]),
                                      DecodingSettings(max_tokens=setup.max_tokens)) for i in plan.items]
        sides = {
            "conformbench runner": runner_side(setup, work, counts["runner"]),
            "conformbench backend": backend_side(setup, requests, counts["backend"]),
            "raw llama_cpp.Llama": raw_side(setup, prompts(setup), counts["raw"]),
        }
        times = interleave(sides, 2 if a.quick else 4)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return finish(report, times, counts, a.json)


def finish(report: Report, times: dict[str, list[float]], counts: dict[str, list[list[int]]],
           json_path: Path | None) -> int:
    per_round = {name: sum(c[0]) for name, c in counts.items()}
    same = counts["runner"][0] == counts["raw"][0] == counts["backend"][0]
    if not same:
        report.notes.append(f"token counts differ between sides: {counts}")
    rates = {}
    for (name, ts), key in zip(times.items(), ("runner", "backend", "raw")):
        rates[name] = per_round[key] / median(ts)
        print(f"  {name:22s} {rates[name]:8.1f} tokens/s  (median {median(ts):.2f} s, {per_round[key]} tokens)")
    report.measurements = {"seconds": times, "tokens_per_round": per_round, "tokens_per_s": rates,
                           "same_token_counts": same}
    raw = rates["raw llama_cpp.Llama"]
    report.add(Ratio("tokens/s conformbench runner/raw llama.cpp", rates["conformbench runner"] / raw, 0.9, ">=",
                     "end to end: load, render, generate, write replay"))
    report.add(Ratio("tokens/s conformbench backend/raw llama.cpp", rates["conformbench backend"] / raw, 0.9, ">=",
                     "generation only"))
    return report.finish(json_path)


if __name__ == "__main__":
    sys.exit(main())
