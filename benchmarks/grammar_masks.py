"""YAML and XML grammars (conformbench.engines.grammars) against llguidance's
own JSON-Schema grammar: compile time per schema and mask time per token.

For each schema of the default dataset (every k-th with --quick), each side
compiles its matcher for SmolLM2's vocabulary, then walks the oracle's valid
instance as its format writes it (json.dumps / YamlOutput.dump /
XmlOutput.dump with the schema), computing the token mask before every
token, as a constrained decoder does. Sides alternate per schema. Printed:
p50 compile seconds and mean mask milliseconds per token per side, and the
yaml/json and xml/json ratios (target <= 3: a YAML or XML constraint should
cost the same order per token as a JSON one).

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

from conformbench.engines.grammars.matcher import grammar_matcher, model_vocabulary
from conformbench.formats.xml_format import XmlOutput
from conformbench.formats.yaml_format import YamlOutput
from conformbench.schemas.build import BuildOptions, build_dataset

SIDES = ("json", "yaml", "xml")


def _matcher(side: str, schema: Any, vocab: Any) -> Any:
    if side != "json":
        return grammar_matcher(schema, side, vocab)
    from llguidance import LLMatcher

    return LLMatcher(vocab.llg, LLMatcher.grammar_from_json_schema(schema), log_level=0)


def _text(side: str, value: Any, schema: Any) -> str:
    if side == "json":
        return json.dumps(value, ensure_ascii=False)
    return YamlOutput().dump(value) if side == "yaml" else XmlOutput().dump(value, schema)


def _walk(side: str, schema: Any, value: Any, vocab: Any) -> tuple[float, float, int]:
    """Compile seconds, summed mask seconds and token count of one document."""
    start = time.perf_counter()
    matcher = _matcher(side, schema, vocab)
    compiled = time.perf_counter() - start
    masks = 0.0
    tokens = vocab.encode(_text(side, value, schema))
    for token in tokens:
        start = time.perf_counter()
        matcher.compute_bitmask()
        masks += time.perf_counter() - start
        if not matcher.consume_token(token):
            raise RuntimeError(f"{side} refused its own document: {matcher.get_error()[:200]}")
    return compiled, masks, len(tokens)


def main() -> int:
    args = parser(__doc__).parse_args()
    report = Report("grammar_masks", "quick" if args.quick else "full")
    vocab = model_vocabulary()
    with tempfile.TemporaryDirectory() as tmp:
        cases = build_dataset(BuildOptions(out=Path(tmp))).cases
    cases = cases[:: 10 if args.quick else 1]
    compile_s: dict[str, list[float]] = {s: [] for s in SIDES}
    mask_s = dict.fromkeys(SIDES, 0.0)
    tokens = dict.fromkeys(SIDES, 0)
    skipped = []
    for i, case in enumerate(cases):
        order = SIDES if i % 2 == 0 else SIDES[::-1]
        try:
            results = {side: _walk(side, case.schema, case.valid_instance, vocab) for side in order}
        except Exception as exc:  # a refused document or schema: listed, not timed
            skipped.append(f"{case.id}: {str(exc)[:120]}")
            continue
        for side, (compiled, masks, count) in results.items():
            compile_s[side].append(compiled)
            mask_s[side] += masks
            tokens[side] += count
    per_token = {s: 1000 * mask_s[s] / max(tokens[s], 1) for s in SIDES}
    for side in SIDES:
        p50 = percentile(compile_s[side], 50) if compile_s[side] else float("nan")
        print(f"{side:5s} compile p50 {p50:.3f} s   mask {per_token[side]:.3f} ms/token over {tokens[side]} tokens")
    report.measurements = {"compile_p50_s": {s: percentile(v, 50) for s, v in compile_s.items() if v},
                           "mask_ms_per_token": per_token, "tokens": tokens, "schemas": len(cases) - len(skipped)}
    report.notes += [f"skipped {s}" for s in skipped]
    for side in ("yaml", "xml"):
        report.add(Ratio(f"{side}_mask_per_token/json", per_token[side] / per_token["json"], 3.0, "<=",
                         f"{per_token[side]:.3f} vs {per_token['json']:.3f} ms/token"))
    return report.finish(args.json)


if __name__ == "__main__":
    raise SystemExit(main())
