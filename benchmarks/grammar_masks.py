"""YAML and XML grammars (conformbench.engines.grammars) against llguidance's
own JSON-Schema grammar: compile time per schema and mask time per token.

For each schema of the default dataset (every k-th with --quick), each side
compiles its matcher for SmolLM2's vocabulary, then walks the oracle's valid
instance as its format writes it (json.dumps / YamlOutput.dump /
XmlOutput.dump with the schema), computing the token mask before every
token, as a constrained decoder does. Sides alternate per schema. Printed:
p50 compile seconds and the mean, p50 and p90 mask milliseconds per token
per side, and the yaml/json and xml/json ratios of the means (target <= 3:
a YAML or XML constraint should cost the same order per token as a JSON
one). Schemas the JSON side (llguidance, lenient) refuses are skipped and
listed. The mean includes each grammar's cold start (lexer states built on
first use), as a run that decodes once per schema pays it.

Run alone:  python benchmarks/grammar_masks.py [--quick] [--json out.json]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Ratio, Report, parser, percentile

from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary
from conformbench.engines.grammars.matcher import grammar_matcher, model_vocabulary
from conformbench.formats.xml.format import XmlOutput
from conformbench.formats.yaml.format import YamlOutput
from conformbench.schemas.build import BuildOptions, build_dataset

SIDES = ("json", "yaml", "xml")


def _matcher(side: str, schema: Any, vocab: Any) -> Any:
    if side != "json":
        return grammar_matcher(schema, side, vocab)
    from llguidance import LLMatcher

    # lenient: keywords llguidance cannot enforce are ignored, not refused
    grammar = LLMatcher.grammar_from_json_schema(schema, defaults={"lenient": True})
    return LLMatcher(vocab.llg, grammar, log_level=0)


def _text(side: str, value: Any, schema: Any) -> str:
    if side == "json":
        return json.dumps(value, ensure_ascii=False)
    return YamlOutput().dump(value) if side == "yaml" else XmlOutput().dump(value, schema)


def _walk(side: str, schema: Any, value: Any, vocab: Any) -> tuple[float, list[float]]:
    """Compile seconds and the mask seconds of every token of one document."""
    start = time.perf_counter()
    matcher = _matcher(side, schema, vocab)
    compiled = time.perf_counter() - start
    masks = []
    for token in vocab.encode(_text(side, value, schema)):
        start = time.perf_counter()
        matcher.compute_bitmask()
        masks.append(time.perf_counter() - start)
        if not matcher.consume_token(token):
            raise RuntimeError(f"{side} refused its own document: {matcher.get_error()[:200]}")
    return compiled, masks


def main() -> int:
    args = parser(__doc__).parse_args()
    report = Report("grammar_masks", "quick" if args.quick else "full")
    vocab = model_vocabulary(LlamaVocabulary.from_gguf())
    with tempfile.TemporaryDirectory() as tmp:
        cases = build_dataset(BuildOptions(out=Path(tmp))).cases
    cases = cases[:: 10 if args.quick else 1]
    compile_s: dict[str, list[float]] = {s: [] for s in SIDES}
    mask_ms: dict[str, list[float]] = {s: [] for s in SIDES}
    skipped = []
    for i, case in enumerate(cases):
        order = SIDES if i % 2 == 0 else SIDES[::-1]
        try:
            results = {side: _walk(side, case.schema, case.valid_instance, vocab) for side in order}
        except Exception as exc:  # noqa: BLE001 - a refused document or schema: listed, not timed
            skipped.append(f"{case.id}: {str(exc)[:120]}")
            continue
        for side, (compiled, masks) in results.items():
            compile_s[side].append(compiled)
            mask_ms[side] += [1000 * m for m in masks]
    mean = {s: sum(v) / len(v) for s, v in mask_ms.items()}
    p50 = {s: percentile(v, 50) for s, v in mask_ms.items()}
    for side in SIDES:
        print(f"{side:5s} compile p50 {percentile(compile_s[side], 50):.3f} s   mask ms/token: "
              f"mean {mean[side]:.3f} p50 {p50[side]:.3f} p90 {percentile(mask_ms[side], 90):.3f} "
              f"over {len(mask_ms[side])} tokens")
    report.measurements = {"compile_p50_s": {s: percentile(v, 50) for s, v in compile_s.items()},
                           "mask_ms_mean": mean, "mask_ms_p50": p50, "schemas": len(cases) - len(skipped)}
    report.notes += [f"skipped {s}" for s in skipped]
    for side in ("yaml", "xml"):
        report.add(Ratio(f"{side}_mask_mean/json", mean[side] / mean["json"], 3.0, "<=",
                         f"{mean[side]:.3f} vs {mean['json']:.3f} ms/token"))
    return report.finish(args.json)


if __name__ == "__main__":
    raise SystemExit(main())
