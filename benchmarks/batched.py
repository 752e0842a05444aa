"""Batched decoding (conformbench.backends.llamacpp.batch_decoder) against sequential decoding
(the llamacpp backend, one sequence at a time) at identical outputs.

Work: K GSM8K problems rendered by the backend's chat template; two sets:
  free         the unconstrained prompt, free text
  constrained  the prompt_only[reasoning] prompt under an llguidance mask of
               the {"reasoning", "answer"} schema (one matcher per sequence)
greedy, the same max_tokens, the same threads, the same model file.

  sequential   LlamaCppBackend.generate_many (Llama.generate per request)
  batched      BatchedDecoder: up to S sequences per llama_decode, one KV
               stream per sequence, finished slots refilled from the queue
  raw          the machine's ceiling (_raw_batched.py): the same prompts
               and the tokens the batched side chose, through llama.cpp's
               batch API with nothing of ours, split and unified KV cache
               (the faster is the ceiling)

Printed per set: the identical-output rate (batched text == sequential
text; llama.cpp's batched arithmetic can flip a greedy near-tie), and
items/s batched over sequential (target >= 1.6 at identical outputs; info
only where outputs differ), and generated tokens/s batched over the raw
ceiling on the same prompts and tokens (target >= 0.9; what the grammar,
our sampling and bookkeeping cost), sides alternating every round. The llguidance
masks of a decode step are filled in one parallel call.

Run alone: python benchmarks/batched.py [--quick] [--sequences S] [--json out.json]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    Ratio,
    Report,
    embedded_model,
    interleave,
    median,
    parser,
    require,
    threads_default,
)
from _raw_batched import RawBatched

N_CTX = 4096
RAW_SIDES = ("raw split KV", "raw unified KV")


def requests(k: int, max_tokens: int, constrained: bool) -> list[Any]:
    from conformbench.records.generation import Constraint, DecodingSettings, GenerationRequest
    from conformbench.records.items import Condition, TaskOptions
    from conformbench.tasks.base import tasks

    task = tasks.get("gsm8k")(TaskOptions(n=k))
    cond = Condition("prompt_only", contract="reasoning") if constrained else Condition("unconstrained")
    out = []
    for item in task.items():
        schema = task.contract_schema(item, cond)
        constraint = Constraint(schema, "llguidance") if constrained and schema is not None else None
        out.append(GenerationRequest(task.prompt(item, cond), DecodingSettings(max_tokens=max_tokens), constraint))
    return out


class Batched:
    """The batched side: its own Llama (same file and settings) and decoder."""

    def __init__(self, model: Path, threads: int, sequences: int, ctx_per_sequence: int) -> None:
        import llama_cpp

        from conformbench.backends.llamacpp.amx import loading_for_this_build
        from conformbench.backends.llamacpp.batch_decoder import BatchedConfig, BatchedDecoder

        with loading_for_this_build():  # the backend's kernels (amx.py): no AMX crash, a fair ratio
            self.llm = llama_cpp.Llama(model_path=str(model), n_ctx=N_CTX, n_threads=threads,
                                       n_threads_batch=threads, seed=0, verbose=False)
        self.decoder = BatchedDecoder(self.llm, BatchedConfig(max_sequences=sequences,
                                                              ctx_per_sequence=ctx_per_sequence))
        self._tokenizer: Any = None

    def masks(self, reqs: list[Any]) -> list[Any]:
        import llama_cpp
        from llguidance import LLMatcher
        from llguidance.llamacpp import lltokenizer_from_vocab

        from conformbench.backends.llamacpp.token_masks import LLGuidanceMask
        from conformbench.engines.base import schema_text

        vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        if self._tokenizer is None:
            self._tokenizer = lltokenizer_from_vocab(vocab, n_vocab=self.decoder.n_vocab)
        out: list[Any] = []
        for req in reqs:
            if req.constraint is None:
                out.append(None)
                continue
            grammar = LLMatcher.grammar_from_json_schema(schema_text(req.constraint.schema))
            out.append(LLGuidanceMask(LLMatcher(self._tokenizer, grammar, log_level=0), self.decoder.n_vocab))
        return out


def sides(backend: Any, batched: Batched, raws: dict[str, RawBatched], reqs: list[Any],
          texts: dict[str, list[list[str]]]) -> dict[str, Callable[[], None]]:
    from conformbench.backends.llamacpp.batch_decoder import SequenceRequest

    tokens = [tuple(backend.tokenize_prompt(r.prompt)) for r in reqs]
    # the tokens the raw sides take: the batched decoder's own, from an untimed run
    chosen = [r.tokens for r in batched.decoder.generate(
        [SequenceRequest(t, r.settings.max_tokens, m) for t, r, m in zip(tokens, reqs, batched.masks(reqs))])]

    def sequential() -> None:
        backend._llm.reset()
        texts["sequential"].append([r.text for r in backend.generate_many(reqs)])

    def batch() -> None:
        # matchers are per generation state: build them inside the timed side, as sequential does
        seq = [SequenceRequest(t, r.settings.max_tokens, m)
               for t, r, m in zip(tokens, reqs, batched.masks(reqs))]
        results = batched.decoder.generate(seq)
        texts["batched"].append([r.text for r in results])
        texts["batched tokens"].append([str(len(r.tokens)) for r in results])

    def raw(name: str) -> Callable[[], None]:
        def side() -> None:
            texts[name].append([str(len(t)) for t in raws[name].generate(tokens, chosen)])
        return side

    return {"sequential (backend)": sequential, "batched": batch} | {name: raw(name) for name in raws}


def ceiling(report: Report, label: str, texts: dict[str, list[list[str]]],
            times: dict[str, list[float]]) -> None:
    """Generated tokens/s of the batched decoder over the faster raw side."""
    def rate(name: str, counts: str) -> float:
        return sum(int(c) for c in texts[counts][0]) / median(times[name])

    raw_rates = {name: rate(name, name) for name in RAW_SIDES}
    best = max(raw_rates, key=raw_rates.__getitem__)
    ours = rate("batched", "batched tokens")
    print(f"  [{label}] tokens/s: batched {ours:.1f}, "
          + ", ".join(f"{n} {r:.1f}" for n, r in raw_rates.items()), flush=True)
    report.add(Ratio(f"tokens/s batched/raw ceiling [{label}]", ours / raw_rates[best], 0.9, ">=",
                     f"{ours:.1f} vs {raw_rates[best]:.1f} tokens/s ({best})"))


def measure(report: Report, label: str, backend: Any, batched: Batched, raws: dict[str, RawBatched],
            reqs: list[Any], rounds: int) -> None:
    from dataclasses import replace

    from conformbench.records.generation import DecodingSettings

    # warm up untimed: tokenizer bridges, the backend's compile cache, llama.cpp buffers
    backend.generate(replace(reqs[0], settings=DecodingSettings(max_tokens=2)))
    batched.masks(reqs[:1])
    texts: dict[str, list[list[str]]] = {"sequential": [], "batched": [], "batched tokens": []}
    texts |= {name: [] for name in raws}
    times = interleave(sides(backend, batched, raws, reqs, texts), rounds)
    pairs = [(s, b) for seq, bat in zip(texts["sequential"], texts["batched"]) for s, b in zip(seq, bat)]
    same = sum(s == b for s, b in pairs)
    differing = sorted({i for seq, bat in zip(texts["sequential"], texts["batched"])
                        for i, (s, b) in enumerate(zip(seq, bat)) if s != b})
    seq_t, bat_t = median(times["sequential (backend)"]), median(times["batched"])
    verdict = "outputs identical" if not differing else f"outputs differ in items {differing}"
    print(f"  [{label}] {len(reqs)} items: sequential {seq_t:.2f} s, batched {bat_t:.2f} s; {verdict}",
          flush=True)
    report.measurements[label] = {"items": len(reqs), "seconds": times, "identical": not differing,
                                  "identical_outputs": same, "outputs": len(pairs), "differing_items": differing}
    report.add(Ratio(f"identical-output rate batched/sequential [{label}]", same / len(pairs), 1.0, ">=",
                     f"{same} of {len(pairs)} outputs"))
    # a speed-up at different outputs is not the same work: then the ratio is info only
    name = f"items/s batched/sequential [{label}]" + ("" if not differing else " (outputs differ: info)")
    report.add(Ratio(name, seq_t / bat_t, 1.6 if not differing else float("inf"), ">=",
                     f"{len(reqs) / bat_t:.2f} vs {len(reqs) / seq_t:.2f} items/s"))
    ceiling(report, label, texts, times)


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--k", type=int, default=None, help="items per set (quick 8, full 32)")
    ap.add_argument("--max-tokens", type=int, default=None, help="quick 96, full 256")
    ap.add_argument("--sequences", type=int, default=8, help="sequences decoded together")
    ap.add_argument("--threads", type=int, default=threads_default())
    a = ap.parse_args()
    k, max_tokens = a.k or (8 if a.quick else 32), a.max_tokens or (96 if a.quick else 256)
    require("llama_cpp", "llguidance")
    from conformbench.backends.base import backends
    from conformbench.records.generation import BackendConfig

    model = embedded_model()
    report = Report("batched", "quick" if a.quick else "full")
    report.notes.append(f"K={k} GSM8K items per set, max_tokens {max_tokens}, {a.sequences} sequences "
                        f"per batch, threads {a.threads}, greedy")
    backend = backends.get("llamacpp")(BackendConfig(model=str(model), threads=a.threads, n_ctx=N_CTX))
    batched = Batched(model, a.threads, a.sequences, ctx_per_sequence=1024)
    raws = {name: RawBatched(model, a.threads, a.sequences, 1024, kv_unified=name.endswith("unified"))
            for name in RAW_SIDES}
    try:
        for label, constrained in (("free", False), ("constrained llguidance", True)):
            measure(report, label, backend, batched, raws, requests(k, max_tokens, constrained),
                    1 if a.quick else 2)
    finally:
        batched.decoder.close()
        for raw in raws.values():
            raw.close()
        backend.close()
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
