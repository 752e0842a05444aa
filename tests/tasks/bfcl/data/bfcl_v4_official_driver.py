"""Recipe: the official BFCL verdicts on recorded answers to every BFCL v4
item we ship, written to ``bfcl_v4_official_verdicts.jsonl`` beside this file.

Run it OUTSIDE the repository's code, against BFCL's own, at the data's
commit; nothing of BFCL is copied into conformbench:

    git -C GORILLA archive 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8 \\
        berkeley-function-call-leaderboard/bfcl_eval | tar -x -C /tmp/bfcl-official
    python tests/tasks/bfcl/data/bfcl_v4_official_driver.py \\
        /tmp/bfcl-official/berkeley-function-call-leaderboard src/conformbench/data/bfcl-v4

(``fetch github:ShishirPatil/gorilla`` gives GORILLA.) Three of BFCL's
modules are stood in for: ``constants.model_config`` (its model table
imports every API client; the one entry used says a prompting model whose
names keep their dots) and the Java and JavaScript parsers (tree-sitter;
never called for Python). Each answer is a text in BFCL's JSON return
format, put through BFCL's prompt-mode pipeline: ``default_decode_ast_prompting``
(``ReturnFormat.JSON``), ``is_function_calling_format_output``, then
``ast_checker`` (Python, the item's category); on irrelevance, the relevance
runner's rule (right when decoding fails or ``is_empty_output``), decoded in
the format asked for (JSON; BFCL's runner decodes irrelevance as Python).
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
import types
from pathlib import Path
from typing import Any

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
              "live_simple", "live_parallel", "live_parallel_multiple")
MODEL = "prompting-model"


def _not_python(*_: object) -> None:
    raise NotImplementedError("Java and JavaScript are not used for Python items")


def _stand_ins() -> None:
    config = types.ModuleType("bfcl_eval.constants.model_config")
    config.MODEL_CONFIG_MAPPING = {MODEL: types.SimpleNamespace(underscore_to_dot=False)}  # type: ignore[attr-defined]
    sys.modules[config.__name__] = config
    for name, function in (("java_parser", "parse_java_function_call"), ("js_parser", "parse_javascript_function_call")):
        module = types.ModuleType(f"bfcl_eval.model_handler.parser.{name}")
        setattr(module, function, _not_python)
        sys.modules[module.__name__] = module


def digest(text: str) -> str:
    """The first 16 hex digits of the text's sha256 (the golden file keeps these, not the texts)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def answer_texts(row: dict[str, Any], truth: list[dict[str, Any]] | None) -> dict[str, str]:
    """The recorded answers to one item, by case, as texts."""
    return {case: a if isinstance(a, str) else json.dumps(a) for case, a in _answers(row, truth).items()}


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def _first(options: list[Any]) -> Any:
    concrete = [o for o in options if o != ""]
    value = concrete[0] if concrete else None
    if isinstance(value, dict):
        return {k: _first(v) for k, v in value.items() if isinstance(v, list) and _first(v) is not None}
    return value


def _right(truth: list[dict[str, Any]]) -> list[dict[str, Any]]:
    calls = []
    for entry in truth:
        ((name, accepted),) = entry.items()
        calls.append({"function": name, "parameters": {k: v for k, v in ((k, _first(o)) for k, o in
                                                                          accepted.items()) if v is not None}})
    return calls


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 7
    if isinstance(value, str):
        return value + " changed"
    if isinstance(value, list):
        return [*value, value[0] if value else "extra"]
    if isinstance(value, dict):
        return {**value, "unexpected_key": 1}
    return "changed"


def _answers(row: dict[str, Any], truth: list[dict[str, Any]] | None) -> dict[str, Any]:
    names = [f["name"] for f in row["function"]]
    if truth is None:  # irrelevance: a plausible call of the first function, and none
        made = [{"function": names[0], "parameters": {}}]
        return {"no_call": [], "prose": "None of the functions can be used.", "call": made,
                "malformed": '[{"function": "' + names[0] + '"}]'}
    right = _right(truth)
    out: dict[str, Any] = {"right": right, "reversed": list(reversed(right))}
    wrong_value = copy.deepcopy(right)
    for call in wrong_value:
        if call["parameters"]:
            key = next(iter(call["parameters"]))
            call["parameters"][key] = _changed(call["parameters"][key])
            break
    out["wrong_value"] = wrong_value
    other = [n for n in names if n != right[0]["function"]]
    out["wrong_function"] = [{**right[0], "function": other[0] if other else right[0]["function"] + "_x"},
                             *right[1:]]
    out["missing_call"] = right[:-1]
    out["extra_call"] = [*right, right[0]]
    out["malformed"] = "[{\"function\": \"" + right[0]["function"] + "\", \"parameters\": {"
    out["fenced"] = "```json\n" + json.dumps(right) + "\n```"
    out["prose_around"] = "Sure! " + json.dumps(right) + " Hope this helps."
    out["string_parameters"] = [{**right[0], "parameters": json.dumps(right[0]["parameters"])}]
    return out


def _official(row: dict[str, Any], truth: list[dict[str, Any]] | None, category: str, text: str) -> dict[str, Any]:
    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.model_handler.utils import default_decode_ast_prompting
    from bfcl_eval.utils import is_empty_output, is_function_calling_format_output

    try:
        decoded = default_decode_ast_prompting(text, ReturnFormat.JSON)
    except Exception:  # noqa: BLE001 - the official decoder's failure is a verdict
        if truth is None:
            return {"valid": True, "error_type": "decoder_failed"}
        return {"valid": False, "error_type": "ast_decoder:decoder_failed"}
    if truth is None:
        called = not is_empty_output(decoded)
        return {"valid": not called, "error_type": "irrelevance_error:decoder_success" if called else None}
    if not is_function_calling_format_output(decoded):
        return {"valid": False, "error_type": "ast_decoder:decoder_wrong_output_format"}
    result = ast_checker(row["function"], decoded, truth, Language.PYTHON, category, MODEL)
    return {"valid": result["valid"], "error_type": result.get("error_type")}


def main(official: Path, data: Path) -> None:
    sys.path.insert(0, str(official))
    _stand_ins()
    out = Path(__file__).with_name("bfcl_v4_official_verdicts.jsonl")
    lines = [json.dumps({"provenance": "bfcl_eval at gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8; "
                         "tests/tasks/bfcl/data/bfcl_v4_official_driver.py"})]
    for category in CATEGORIES:
        name = f"BFCL_v4_{category}.json"
        truths = {} if category == "irrelevance" else \
            {r["id"]: r["ground_truth"] for r in _rows(data / "possible_answer" / name)}
        for row in _rows(data / name):
            truth = truths.get(row["id"]) if category != "irrelevance" else None
            for case, text in answer_texts(row, truth).items():
                verdict = _official(row, truth, category, text)
                lines.append(json.dumps({"category": category, "id": row["id"], "case": case,
                                         "sha256": digest(text), **verdict}))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines) - 1} verdicts -> {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
