"""ConCodeEval experiment 1, data-as-code generation: given a schema in one
of 5 formats, write a sample in one of 3 output formats. Correct = the
sample parses strictly in the requested format and is valid for the schema.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field, field_validator, model_validator

from conformbench.arms.base import arms
from conformbench.engines.base import form_refusal
from conformbench.errors import ConformbenchError
from conformbench.formats.base import output_formats
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import Condition, Item, ItemScore, KeywordViolation
from conformbench.records.prompt import Prompt
from conformbench.records.rounds import TurnKind
from conformbench.registry import did_you_mean
from conformbench.tasks.base import tasks
from conformbench.tasks.concodeeval.base import (
    Cases,
    ConCodeEvalTask,
    ItemParts,
    known_system,
    parse_answer,
    position_of,
    truncated_sample,
)
from conformbench.tasks.concodeeval.prompts import (
    GENERATION_VARIANTS,
    GenerationShotText,
    PromptStyle,
    generation_prompt,
)
from conformbench.tasks.concodeeval.shots import (
    GENERATION_SHOTS,
    is_array_root,
    object_schema,
    typed_schema,
)
from conformbench.tasks.grid import TaskParams
from conformbench.validator.schema_validator import Violation, validator_for

__all__ = ["CLOSING_FENCE_STOP", "SCHEMA_CONTRACT", "GenerationTask"]

#: contract name: the item's own schema is the contract
SCHEMA_CONTRACT = "schema"

#: A bare fence line after the sample: the prompt ends inside an opened code
#: block, so this line closes it, and what follows (prose, further blocks)
#: is no part of the sample; stopping here saves the tokens SmolLM2 would
#: write up to max_tokens. The newline after the backticks keeps an opener
#: with a language tag ("```json") from matching, and an answer that opens
#: its own block starts with that fence (no newline before it). Left: prose
#: and then a bare opener is cut before the sample (then unparseable).
CLOSING_FENCE_STOP = "\n```\n"


def _root_type(schema: JSONValue) -> str | None:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return kind if isinstance(kind, str) else None


class GenerationOptions(TaskParams):
    """The generation task's options: the paper's prompt variant, and the
    system prompt (by default the one the paper paired with the variant)."""

    prompt: str = Field("common", description="Prompt variant of the generation task: common, qa1 or qa2.")
    system: str = Field("none", description="System prompt of the ConCodeEval tasks.")

    @model_validator(mode="before")
    @classmethod
    def _paired_system(cls, data: Any) -> Any:
        if isinstance(data, dict) and "system" not in data and data.get("prompt", "common") in GENERATION_VARIANTS:
            # the paper paired each prompt variant with its own system prompt
            return {**data, "system": GENERATION_VARIANTS[data.get("prompt", "common")]}
        return data

    @field_validator("prompt")
    @classmethod
    def _known_prompt(cls, value: str) -> str:
        if value not in GENERATION_VARIANTS:
            hint = did_you_mean(value, list(GENERATION_VARIANTS))
            raise ValueError(f"unknown prompt {value!r}{hint}; known: {', '.join(GENERATION_VARIANTS)}")
        return value

    @field_validator("system")
    @classmethod
    def _known_system(cls, value: str) -> str:
        return known_system(value)


@tasks.register("generation")
class GenerationTask(ConCodeEvalTask):
    """Write a schema-valid sample (Gen Acc, IS%, RTV%)."""

    correctness_label = "schema-valid sample (Gen Acc)"
    #: a sample is right exactly when it is valid
    zero_by_definition = frozenset({"wrong_but_valid"})
    contracts = (SCHEMA_CONTRACT,)
    answer_contract = None
    default_arms = ("prompt_only",)
    few_shot_count = GENERATION_SHOTS
    options_model: ClassVar[type[BaseModel] | None] = GenerationOptions
    refused_arms: ClassVar[dict[str, str]] = {
        "unconstrained": "the generation prompt always carries the schema; use prompt_only",
        "reason_then_constrain": "generation has no separate answer to package",
    }

    def contract_form(self, item: Item, condition: Condition) -> str:
        return condition.text_axis("output_format") or "json"

    def cell_exclusion(self, item: Item, condition: Condition) -> str | None:
        missing = super().cell_exclusion(item, condition)
        if missing is not None or condition.engine is None or not arms.get(condition.arm).constrained:
            return missing
        return form_refusal(condition.engine, self.contract_form(item, condition))

    def build_items(self, cases: Cases) -> list[Item]:
        chooser = self.shot_chooser(cases)
        items: list[Item] = []
        for case in cases.test:
            choice = chooser.generation(case, GENERATION_SHOTS) if chooser is not None else None
            meta: dict[str, JSONValue] = {
                "root_type": _root_type(case.schema),
                "array_root": is_array_root(case.schema),
            }
            items.append(self.case_item(case, choice, ItemParts(f"cc_{case.id}", {}, meta)))
        return items

    def contract_schema(self, item: Item, condition: Condition) -> Schema | None:
        if condition.contract != SCHEMA_CONTRACT:
            return None
        return object_schema(item.input["schema"])

    def turn_prompt(self, item: Item, condition: Condition, kind: TurnKind) -> Prompt:
        """The paper's prompt, whatever the turn (the schema is always shown)."""
        schema_format, output_format = condition.text_axis("schema_format"), condition.text_axis("output_format")
        assert schema_format is not None and output_format is not None
        style = PromptStyle(schema_format, output_format, variant=self.params["prompt"], system=self.params["system"])
        dump = output_formats.get(output_format)().dump
        shots = tuple(
            GenerationShotText(s.renderings[schema_format], dump(s.instance, typed_schema(s.schema)))
            for s in self.check_shots(item, condition)
        )
        return generation_prompt(style, self.schema_text(item, schema_format), shots)

    def turn_stops(self, item: Item, condition: Condition, kind: TurnKind) -> tuple[str, ...]:
        # under a grammar the sample ends by itself, and a stop could only cut it
        if kind in ("constrained", "think") or (kind == "package" and condition.engine is not None):
            return ()
        return (CLOSING_FENCE_STOP,)

    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        schema = item.input.get("schema")
        output_format = condition.text_axis("output_format")
        if not isinstance(schema, (dict, bool)) or output_format is None:
            return ItemScore(valid=False, correct=False, parsed=False, truncated=truncated,
                             note="item has no schema or condition no output format")
        parsed, continued = parse_answer(output_format, text, object_schema(schema))
        if not parsed.ok:
            return ItemScore(valid=False, correct=False, parsed=False, truncated=truncated,
                             note=f"unparseable {output_format}: {parsed.error}")
        try:
            found = validator_for(object_schema(schema), formats=self.options.format_mode).violations(parsed.value)
        except ConformbenchError as exc:  # a broken stored schema, not the model's fault
            return ItemScore(valid=None, correct=None, truncated=truncated, answer=parsed.value,
                             note=f"cannot validate against the item's schema: {exc}")
        violations = tuple(self._keyword(schema, v, condition.text_axis("schema_format")) for v in found)
        cut = truncated_sample(truncated, text, continued)
        valid = not found and not cut
        note = "cut at max_tokens outside a closed code fence" if cut else (
            "read as the inside of the prompt's open code fence" if continued else None)
        return ItemScore(
            valid=valid,
            correct=valid,
            parsed=True,
            root_type_ok=not any(v.root_type for v in found),
            violations=violations,
            truncated=truncated,
            answer=parsed.value,
            note=note,
        )

    def error_keywords(self, item: Item, score: ItemScore) -> tuple[str, ...] | None:
        if score.correct is not False:
            return None
        return tuple(dict.fromkeys(v.keyword for v in score.violations))

    @staticmethod
    def _keyword(schema: JSONValue, v: Violation, schema_format: str | None) -> KeywordViolation:
        return KeywordViolation(v.keyword, v.schema_path, v.instance_path,
                                position_of(schema, v.schema_path, schema_format), message=v.message)

