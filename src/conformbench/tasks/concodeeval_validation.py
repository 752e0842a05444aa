"""ConCodeEval experiment 2, DSL validation: does this sample (in one of 3
output formats) adhere to this schema (in one of 5 formats)? Yes/no,
balanced: per schema, its valid sample (yes) and one one-keyword violation
(no). Scored as accuracy (Val Acc) and macro-F1.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import ClassVar

from conformbench.formats.base import output_formats
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import Condition, Item, ItemScore
from conformbench.records.prompt import Prompt
from conformbench.tasks.base import tasks
from conformbench.tasks.concodeeval_base import (
    Cases,
    ConCodeEvalTask,
    GridArm,
    ItemParts,
    parse_answer,
    position_of,
    truncated_sample,
)
from conformbench.tasks.concodeeval_prompts import (
    ANSWER_SCHEMA,
    PromptStyle,
    ValidationShotText,
    validation_packaging_prompt,
    validation_prompt,
)
from conformbench.tasks.shots import (
    VALIDATION_SHOTS,
    CaseLike,
    InvalidLike,
    Shot,
    ShotPool,
    shown_faithfully,
    typed_schema,
)
from conformbench.validation.validator import validator_for

__all__ = ["ANSWER_CONTRACT", "ValidationTask", "parse_yes_no"]

ANSWER_CONTRACT = "answer"
LABELS = ("yes", "no")

#: fence info strings of prose, dropped before reading the answer word (each
#: output format's own ``languages`` are dropped too)
_PROSE_FENCE_TAGS = frozenset({"", "text", "txt", "plaintext", "plain", "markdown", "md"})


def _fence_tags() -> frozenset[str]:
    tags = {lang for name in output_formats.names() for lang in output_formats.get(name).languages}
    return _PROSE_FENCE_TAGS | tags
_FIRST_WORD = re.compile(r"[^A-Za-z]*([A-Za-z]+)")


def parse_yes_no(text: str) -> str | None:
    """'yes' | 'no' when the first word of the answer (after code fences and
    punctuation) is yes or no in any case; None otherwise."""
    rest = text[:4096].strip()
    if rest.startswith("`"):
        rest = rest.lstrip("`")
        head, sep, tail = rest.partition("\n")
        if sep and head.strip().lower() in _fence_tags():
            rest = tail
    match = _FIRST_WORD.match(rest)
    if match is None:
        return None
    word = match.group(1).lower()
    return word if word in LABELS else None


def _faithful_all(value: JSONValue, schema: Schema | bool, fmts: tuple[str, ...], kw: str | None) -> bool:
    return all(shown_faithfully(value, schema, f, kw) for f in fmts)


@tasks.register("validation")
class ValidationTask(ConCodeEvalTask):
    """Answer whether a sample adheres to a schema (Val Acc, macro-F1)."""

    correctness_label = "yes/no verdict (Val Acc)"
    contracts = (ANSWER_CONTRACT,)
    answer_contract = ANSWER_CONTRACT
    default_arms = ("unconstrained",)
    few_shot_count = VALIDATION_SHOTS
    param_defaults: ClassVar[dict[str, str]] = {"system": "none"}

    def grid_arms(self, output_format: str) -> list[GridArm]:
        return [
            GridArm(arm, None if arm == "unconstrained" else ANSWER_CONTRACT, engine)
            for arm in self.arm_names
            for engine in self._engines_for(arm)
        ]

    # -- items --------------------------------------------------------------

    def build_items(self, cases: Cases) -> list[Item]:
        pool = ShotPool(cases.pool, self.schema_format_names, self.output_format_names)
        few = any(self.shot_counts)
        used: Counter[str] = Counter()
        items: list[Item] = []
        for case in cases.test:
            invalid = self._choose_invalid(case, used)
            if invalid is None:
                continue
            used[invalid.keyword] += 1
            shots = pool.validation(case.id) if few else ()
            items.append(self._item(case, None, shots))
            items.append(self._item(case, invalid, shots))
        return items

    def _choose_invalid(self, case: CaseLike, used: Counter[str]) -> InvalidLike | None:
        """The violation whose keyword was used least so far (ties: name,
        then schema path), so the mix of keywords stays broad."""
        fmts = self.output_format_names
        if not _faithful_all(case.valid_instance, case.schema, fmts, None):
            self.skipped[case.id] = "valid sample changes verdict in an output format"
            return None
        if not case.invalid_instances:
            self.skipped[case.id] = "the schema has no constraint to violate"
            return None
        usable = [i for i in case.invalid_instances if _faithful_all(i.instance, case.schema, fmts, i.keyword)]
        if not usable:
            self.skipped[case.id] = "no one-keyword violation survives every output format"
            return None
        chosen: InvalidLike = min(usable, key=lambda i: (used[i.keyword], i.keyword, i.schema_path))
        return chosen

    def _item(self, case: CaseLike, invalid: InvalidLike | None, shots: tuple[Shot, ...]) -> Item:
        """The 'yes' item of the schema (invalid None) or its 'no' item."""
        if invalid is None:
            item_id, instance, label, keyword, path = f"{case.id}:valid", case.valid_instance, "yes", None, None
        else:
            keyword, path = str(invalid.keyword), str(invalid.schema_path)
            item_id, instance, label = f"{case.id}:{keyword}", invalid.instance, "no"
        positions = {} if path is None else {f: position_of(case.schema, path, f) for f in self.schema_format_names}
        meta: dict[str, JSONValue] = {
            "label": label,
            "violated_keyword": keyword,
            "violated_schema_path": path,
            "violated_positions": positions,
        }
        return self.case_item(case, shots, ItemParts(item_id, {"instance": instance}, meta, target=label))

    # -- prompts ------------------------------------------------------------

    def contract_schema(self, item: Item, condition: Condition) -> Schema | None:
        return dict(ANSWER_SCHEMA) if condition.contract == ANSWER_CONTRACT else None

    def _prompt(self, item: Item, condition: Condition, json_answer: bool) -> Prompt:
        sf, of = condition.schema_format, condition.output_format
        assert sf is not None and of is not None
        dump = output_formats.get(of)().dump
        schema = item.input["schema"]
        shots = tuple(
            ValidationShotText(s.renderings[sf], dump(s.instance, typed_schema(s.schema)), str(s.answer))
            for s in self.check_shots(item, condition)
        )
        style = PromptStyle(sf, of, system=self.params["system"], json_answer=json_answer)
        sample = dump(item.input["instance"], typed_schema(schema))
        return validation_prompt(style, self.schema_text(item, sf), sample, shots)

    def prompt(self, item: Item, condition: Condition) -> Prompt:
        json_answer = condition.contract == ANSWER_CONTRACT and condition.arm != "reason_then_constrain"
        return self._prompt(item, condition, json_answer)

    def packaging_prompt(self, item: Item, condition: Condition, free_text: str) -> Prompt:
        return validation_packaging_prompt(self._prompt(item, condition, False), free_text)

    # -- scoring ------------------------------------------------------------

    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        label = item.target if item.target in LABELS else None
        if condition.contract != ANSWER_CONTRACT:
            pred = parse_yes_no(text)
            note = None if pred is not None else "unparseable answer: first word is not yes/no"
            return ItemScore(valid=None, correct=pred is not None and pred == label, parsed=pred is not None,
                             label=label, prediction=pred, truncated=truncated, answer=pred, note=note)
        parsed, continued = parse_answer("json", text, dict(ANSWER_SCHEMA))
        if not parsed.ok:
            return ItemScore(valid=False, correct=False, parsed=False, label=label, truncated=truncated,
                             note=f"unparseable JSON answer: {parsed.error}")
        cut = truncated_sample(truncated, text, continued)
        valid = validator_for(dict(ANSWER_SCHEMA)).is_valid(parsed.value) and not cut
        pred = str(parsed.value["answer"]) if valid else None
        note = None if valid else ("cut at max_tokens" if cut else "answer does not match {\"answer\": \"yes\"|\"no\"}")
        return ItemScore(valid=valid, correct=pred is not None and pred == label, parsed=True,
                         label=label, prediction=pred, truncated=truncated, answer=parsed.value, note=note)

