"""The transformers backend against the llama.cpp backend on the embedded
SmolLM2 GGUF: the same prompts, greedy, one thread.

Agreement: transformers fp32 (the GGUF dequantised) against llama.cpp (the
Q4_1 kernels): the share of prompts whose greedy outputs are identical, and
for the others the first token position where they part (the tokenizers
are the same, so token ids compare directly). Speed: completion tokens per
generation second of llama.cpp, transformers fp32 and bf16, and on
transformers each engine's constrained/unconstrained tokens/s (target
>= 0.95). The sides run one after another (each model is loaded once), so
load drift on a shared machine can tilt a ratio: run it alone, and read
numbers taken under load as such.

  python benchmarks/transformers_vs_llamacpp.py [--quick] [--json out.json]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Ratio, Report, parser, require

from conformbench.backends.base import backends
from conformbench.records.generation import BackendConfig, Constraint, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt

QUESTIONS = [
    "What is 6 times 7? Answer in one short sentence.",
    "Name three colours, comma separated.",
    "Write a JSON object for a person with a name and an age.",
    "Explain in two sentences why the sky is blue.",
    "Tom has 3 apples and buys 5 more. How many apples does he have?",
    "Translate 'good morning' into French.",
    "List the first five prime numbers.",
    "What is the capital of Italy?",
    "Write a haiku about the sea.",
    "A train travels 60 km in 1.5 hours. What is its speed in km/h?",
    "Give one synonym for 'happy'.",
    "Write a Python function that adds two numbers.",
]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 60},
                                           "confidence": {"type": "number"}},
          "required": ["answer", "confidence"], "additionalProperties": False}


def _request(question: str, max_tokens: int, constraint: Constraint | None = None) -> GenerationRequest:
    return GenerationRequest(Prompt((Message("user", question),)), DecodingSettings(max_tokens=max_tokens),
                             constraint)


def _tokens_of(backend: Any, text: str) -> list[int]:
    return list(backend.vocabulary.tokenize(text))


def _run(backend: Any, questions: list[str], max_tokens: int, engine: str | None = None) -> dict[str, Any]:
    texts: list[str] = []
    tokens = 0
    seconds = 0.0
    for q in questions:
        result = backend.generate(_request(q, max_tokens, Constraint(SCHEMA, engine) if engine else None))
        texts.append(result.text)
        tokens += result.completion_tokens
        seconds += result.seconds
    return {"texts": texts, "tokens": tokens, "seconds": seconds, "tps": tokens / seconds if seconds else 0.0}


def _agreement(llama: Any, ours: list[str], theirs: list[str]) -> dict[str, Any]:
    firsts: list[int] = []
    same = 0
    for a, b in zip(ours, theirs):
        if a == b:
            same += 1
            continue
        ta, tb = _tokens_of(llama, a), _tokens_of(llama, b)
        firsts.append(next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb))))
    return {"identical": same, "n": len(ours), "first_divergence_tokens": firsts}


def main() -> int:
    args = parser(__doc__).parse_args()
    require("torch", "transformers")
    questions = QUESTIONS[:4] if args.quick else QUESTIONS
    max_tokens = 48 if args.quick else 96
    report = Report(script="transformers_vs_llamacpp.py", mode="quick" if args.quick else "full")
    report.notes.append("taken on a shared machine under load: absolute tokens/s are not benchmarks, "
                        "ratios measured side by side are")
    llama = backends.create("llamacpp", BackendConfig(threads=1))
    sides: dict[str, dict[str, Any]] = {"llamacpp": _run(llama, questions, max_tokens)}
    for dtype in ("fp32", "bf16"):
        hf = backends.create("transformers", BackendConfig(threads=1, extra={"dtype": dtype}))
        sides[f"transformers-{dtype}"] = _run(hf, questions, max_tokens)
        if dtype == "fp32":
            agree = _agreement(llama, sides["transformers-fp32"]["texts"], sides["llamacpp"]["texts"])
            report.measurements["agreement_fp32_vs_llamacpp"] = agree
            report.add(Ratio("identical greedy outputs, transformers fp32 vs llama.cpp",
                             agree["identical"] / agree["n"], 0.5, ">=",
                             f"{agree['identical']}/{agree['n']}; first divergence at tokens "
                             f"{agree['first_divergence_tokens']}"))
            for engine in ("llguidance", "xgrammar", "outlines"):
                if engine == "xgrammar" and not _have("xgrammar"):
                    report.notes.append("xgrammar not installed: its ratio is not measured")
                    continue
                _run(hf, questions[:1], 8, engine)  # compile and warm up outside the timing
                base = _run(hf, questions, max_tokens, None)
                constrained = _run(hf, questions, max_tokens, engine)
                sides[f"transformers-fp32-{engine}"] = constrained
                report.add(Ratio(f"{engine} constrained/unconstrained tokens/s on transformers fp32",
                                 constrained["tps"] / base["tps"], 0.95, ">=",
                                 f"{constrained['tps']:.1f} vs {base['tps']:.1f} tokens/s"))
        hf.close()
    llama.close()
    report.measurements["tokens_per_second"] = {k: round(v["tps"], 2) for k, v in sides.items()}
    for name in ("transformers-fp32", "transformers-bf16"):
        report.add(Ratio(f"{name}/llama.cpp tokens/s", sides[name]["tps"] / sides["llamacpp"]["tps"], 0.2, ">=",
                         f"{sides[name]['tps']:.1f} vs {sides['llamacpp']['tps']:.1f} tokens/s"))
    return report.finish(args.json)


def _have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    raise SystemExit(main())
