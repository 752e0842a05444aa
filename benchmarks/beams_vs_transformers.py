"""llama.cpp's beam search against transformers' ``generate(num_beams=3)``,
and llama.cpp's greedy against transformers' greedy, on the same embedded
SmolLM2 GGUF and the same ConCodeEval JSON generation items (JSON schema,
JSON output, prompt_only, zero-shot), one thread.

Each side is a real run of the run library (``runner.run.execute``) into
its own replay under --out (so an interrupted measurement resumes), one run
at a time: llama.cpp greedy, llama.cpp beams 3 (transformers' stop rule,
the default), transformers fp32 greedy, transformers fp32 beams 3, and
llama.cpp beams 3 under the old ``beam-search-scorer`` rule. Then, item by
item: how many answers are the identical text on both backends, greedy and
beams 3. The arithmetic differs (Q4_1 kernels against the dequantised
weights in fp32), so greedy does not agree everywhere; the target is that
beam search agrees at least as often as greedy does (issue #41: the only
remaining differences are arithmetic). The loop stop is off on every side
(transformers' beam search has no equivalent), the budget is --max-tokens.

--f32 runs every side on an F32 copy of the GGUF (``_f32_gguf.py``, written
once under --out): llama.cpp then multiplies the same float32 weights
transformers does, so the greedy answers part only where float32 sums are
ordered differently, and what is left between the beam answers is the
search itself.

  python benchmarks/beams_vs_transformers.py [--quick] [--f32] [--n 32] [--max-tokens 256] [--out DIR] [--json out.json]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Ratio, Report, parser, require

OLD_RULE = "llamacpp beams 3, old stop rule"
SIDES: dict[str, dict[str, Any]] = {
    "llamacpp greedy": {"backend": "llamacpp", "beams": 1, "extra": {}},
    "llamacpp beams 3": {"backend": "llamacpp", "beams": 3, "extra": {}},
    "transformers greedy": {"backend": "transformers", "beams": 1, "extra": {"dtype": "float32"}},
    "transformers beams 3": {"backend": "transformers", "beams": 3, "extra": {"dtype": "float32"}},
    "llamacpp beams 3, old stop rule": {"backend": "llamacpp", "beams": 3,
                                        "extra": {"beam_stop": "beam-search-scorer"}},
}


def _spec(side: dict[str, Any], n: int, max_tokens: int, out: Path, model: Path | None, seed: int = 0) -> Any:
    from conformbench.records.spec import RunSpec

    weights = {"model": str(model)} if model is not None else {}
    return RunSpec.model_validate({
        "models": [{"label": "smollm2-135m", "backend": side["backend"], "threads": 1, "extra": side["extra"],
                    **weights}],
        "tasks": [{"name": "generation", "n": n, "seed": seed, "schema_formats": ["json"], "output_formats": ["json"],
                   "arms": ["prompt_only"], "max_tokens": max_tokens}],
        "decoding": {"temperature": 0.0, "seed": 0, "loop_stop": False, "beams": side["beams"]},
        "out": str(out), "quiet": True, "canary": False,
    })


def _texts(replay: Path) -> dict[str, tuple[str, str]]:
    """item id -> (text, finish reason) of every generation in ``replay``."""
    out: dict[str, tuple[str, str]] = {}
    for line in replay.read_text(encoding="utf-8").split("\n"):
        if line.startswith('{"kind":"generation"'):
            rec = json.loads(line)
            out[rec["item_id"]] = (rec["text"], rec["finish_reason"])
    return out


def _agree(a: dict[str, tuple[str, str]], b: dict[str, tuple[str, str]]) -> tuple[int, int, list[str]]:
    both = sorted(set(a) & set(b))
    differ = [i for i in both if a[i][0] != b[i][0]]
    return len(both) - len(differ), len(both), differ


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--n", type=int, default=None, help="items (quick 6, full 32)")
    ap.add_argument("--max-tokens", type=int, default=256, help="budget of every answer (default 256)")
    ap.add_argument("--out", type=Path, default=Path("conformbench-out/beams-vs-transformers"))
    ap.add_argument("--f32", action="store_true", help="every side on an F32 copy of the GGUF (written under --out)")
    ap.add_argument("--no-old-rule", action="store_true", help="leave out the fifth side (beam_stop beam-search-scorer)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0],
                    help="dataset seeds: each seed's generated items (unseen items: not 0)")
    ap.add_argument("--plain", action="store_true",
                    help="also plain AutoModelForCausalLM.generate (greedy and num_beams=3) on the same prompts, "
                         "each differing beam answer classified by both answers' length-normalised scores "
                         "(near-tie within 1e-4, or rule)")
    ap.add_argument("--no-backend", action="store_true", help="leave out the project's transformers backend sides")
    a = ap.parse_args()
    require("llama_cpp", "torch", "transformers")
    if len(a.seeds) > 1 or a.plain:
        return _by_seed(a)
    from conformbench.backends.locate import embedded_model_path
    from conformbench.runner.run import execute

    n = a.n or (6 if a.quick else 32)
    report = Report("beams_vs_transformers", "quick" if a.quick else "full")
    report.notes.append(f"{n} ConCodeEval generation items (json schema, json output, prompt_only, 0-shot), "
                        f"budget {a.max_tokens} tokens, loop stop off, 1 thread; transformers in float32")
    model = None
    if a.f32:
        from _f32_gguf import f32_copy

        a.out.mkdir(parents=True, exist_ok=True)
        model = f32_copy(embedded_model_path(), a.out / "SmolLM2-135M-Instruct.F32.gguf")
        report.notes.append("every side on an F32 copy of the GGUF (the same float32 weights on both backends)")
    texts: dict[str, dict[str, tuple[str, str]]] = {}
    seconds: dict[str, float] = {}
    sides = {k: v for k, v in SIDES.items() if not (a.no_old_rule and k == OLD_RULE)}
    for name, side in sides.items():
        folder = a.out / name.replace(" ", "-").replace(",", "")
        start = time.perf_counter()
        summary = execute(_spec(side, n, a.max_tokens, folder, model))
        seconds[name] = time.perf_counter() - start
        texts[name] = _texts(summary.replay)
        print(f"  {name:34s} {len(texts[name])} answers, {seconds[name]:7.1f} s ({summary.replay})", flush=True)
    greedy = _agree(texts["llamacpp greedy"], texts["transformers greedy"])
    beams = _agree(texts["llamacpp beams 3"], texts["transformers beams 3"])
    nothing: tuple[int, int, list[str]] = (0, 0, [])
    old = _agree(texts[OLD_RULE], texts["transformers beams 3"]) if OLD_RULE in texts else nothing
    rule = _agree(texts[OLD_RULE], texts["llamacpp beams 3"]) if OLD_RULE in texts else nothing
    for label, (same, total, differ) in (("greedy: llama.cpp = transformers", greedy),
                                         ("beams 3: llama.cpp = transformers", beams),
                                         ("beams 3, old rule: llama.cpp = transformers", old),
                                         ("llama.cpp beams 3: old rule = new rule", rule)):
        if not total:
            continue
        print(f"  {label:44s} {same}/{total}" + (f"  (differ: {', '.join(differ)})" if differ else ""))
    report.measurements = {"seconds": seconds, "greedy_identical": greedy[:2], "beams_identical": beams[:2],
                           "old_rule_beams_identical": old[:2], "old_vs_new_rule_identical": rule[:2],
                           "differ": {"greedy": greedy[2], "beams": beams[2], "old_rule": old[2],
                                      "rule_changed": rule[2]}}
    share = (beams[0] / beams[1]) / (greedy[0] / greedy[1]) if greedy[0] and beams[1] else float("nan")
    report.add(Ratio("identical answers, beams 3 / greedy (llama.cpp vs transformers)", share, 1.0, ">=",
                     f"beams {beams[0]}/{beams[1]}, greedy {greedy[0]}/{greedy[1]}"))
    return report.finish(a.json)


def _by_seed(a: Any) -> int:
    """Every seed's items on llama.cpp (and the project's transformers
    backend unless --no-backend), and with --plain plain generate; agreement
    per seed and in all, each differing item classified."""
    from conformbench.backends.locate import embedded_model_path
    from conformbench.runner.run import execute

    n = a.n or 12
    report = Report("beams_vs_transformers", "seeds")
    report.notes.append(f"seeds {a.seeds}, {n} items each, budget {a.max_tokens}, loop stop off, 1 thread")
    model = embedded_model_path()
    if a.f32:
        from _f32_gguf import f32_copy

        a.out.mkdir(parents=True, exist_ok=True)
        model = f32_copy(model, a.out / "SmolLM2-135M-Instruct.F32.gguf")
    names = [k for k in SIDES if k != OLD_RULE and not (a.no_backend and k.startswith("transformers"))]
    plain = None
    if a.plain:
        from _hf_generate import LlamaPrompts, PlainGenerate, replay_prompts

        plain = PlainGenerate(model)
        llama_ids = LlamaPrompts(model)
    tally: dict[str, list[int]] = {}
    classes: dict[str, Any] = {}
    for seed in a.seeds:
        texts = {name: _texts(execute(_spec(SIDES[name], n, a.max_tokens, a.out / f"seed-{seed}" /
                                            name.replace(" ", "-"), model if a.f32 else None, seed)).replay)
                 for name in names}
        if plain is not None:
            replay = a.out / f"seed-{seed}" / "llamacpp-greedy"
            prompts = replay_prompts(next(replay.rglob("*.jsonl")))
            ids = {i: llama_ids.ids(p) for i, p in prompts.items()}
            retokenized = sorted(i for i, p in prompts.items() if plain.prompt_ids(p) != ids[i])
            print(f"  seed {seed} prompts transformers' tokenizer tokenizes differently: {len(retokenized)}/"
                  f"{len(ids)} {retokenized}")
            stops = ("\n```\n",)
            for beams in (1, 3):
                label = "generate greedy" if beams == 1 else "generate beams 3"
                texts[label] = {i: (plain.generate(ids[i], beams, a.max_tokens, stops), "") for i in prompts}
            same, total, differ = _agree(texts["llamacpp beams 3"], texts["generate beams 3"])
            for item in differ:
                classes[item] = plain.classify(ids[item], llama_ids.answer(texts["llamacpp beams 3"][item][0]),
                                               llama_ids.answer(texts["generate beams 3"][item][0]))
        pairs = [("greedy", "llamacpp greedy", "generate greedy"), ("beams 3", "llamacpp beams 3", "generate beams 3"),
                 ("backend greedy", "llamacpp greedy", "transformers greedy"),
                 ("backend beams 3", "llamacpp beams 3", "transformers beams 3")]
        for label, x, y in pairs:
            if x in texts and y in texts:
                same, total, differ = _agree(texts[x], texts[y])
                tally.setdefault(label, [0, 0])
                tally[label][0] += same
                tally[label][1] += total
                print(f"  seed {seed} {label:16s} {same}/{total}" + (f" differ {differ}" if differ else ""))
    for item, c in classes.items():
        print(f"  {item}: first differing token {c['step']}; (tokens, score) ours {c['ours']} theirs {c['theirs']} "
              f"gap {c['gap']:.2e} {c['kind']}")
    report.measurements = {"identical": tally, "classified": classes}
    if "greedy" in tally and "beams 3" in tally:
        g, b = tally["greedy"], tally["beams 3"]
        report.add(Ratio("beams 3 identical - (greedy identical - seeds), plain generate", b[0] - g[0] + len(a.seeds),
                         0, ">=", f"beams {b[0]}/{b[1]}, greedy {g[0]}/{g[1]}"))
    return report.finish(a.json)


if __name__ == "__main__":
    raise SystemExit(main())
