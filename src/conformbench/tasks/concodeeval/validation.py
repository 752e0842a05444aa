"""ConCodeEval experiment 2, DSL validation: does this sample (in one of 3
output formats) adhere to this schema (in one of 5 formats)? Yes/no,
balanced: per schema, its valid sample (yes) and one invalid sample (no).
Scored as accuracy (Val Acc) and macro-F1.

The invalid sample breaks one keyword, or, for about a third of the schemas
(``TWO_CONSTRAINT_SHARE``, drawn by seed and schema id), exactly two keyword
occurrences as the paper's Listing 2 does; a drawn schema whose violations
do not combine keeps a one-keyword sample and says why.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from conformbench.errors import ConformbenchError
from conformbench.formats.base import output_formats
from conformbench.formats.limits import oversize
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import Condition, Item, ItemScore
from conformbench.records.prompt import Prompt
from conformbench.records.rounds import TurnKind
from conformbench.schemas.case import InvalidInstance
from conformbench.schemas.pairs import PairViolation, violate_two
from conformbench.tasks.base import tasks
from conformbench.tasks.concodeeval.base import (
    Cases,
    ConCodeEvalTask,
    ItemParts,
    parse_answer,
    position_of,
    truncated_sample,
)
from conformbench.tasks.concodeeval.error_shots import ShotChoice
from conformbench.tasks.concodeeval.prompts import (
    ANSWER_SCHEMA,
    PromptStyle,
    ValidationShotText,
    validation_packaging_prompt,
    validation_prompt,
)
from conformbench.tasks.concodeeval.shots import (
    VALIDATION_SHOTS,
    CaseLike,
    InvalidLike,
    keeps_violations,
    object_schema,
    shown_faithfully,
    typed_schema,
)
from conformbench.validator.schema_validator import validator_for

__all__ = [
    "ANSWER_CONTRACT",
    "PAIR_TRIES",
    "TWO_CONSTRAINT_SHARE",
    "Negative",
    "ValidationTask",
    "drawn_for_two",
    "parse_yes_no",
]

ANSWER_CONTRACT = "answer"
LABELS = ("yes", "no")

#: share of schemas whose 'no' sample is meant to break two constraints
#: (numerator, denominator)
TWO_CONSTRAINT_SHARE = (1, 3)
#: pairs of one-keyword violations tried per schema before falling back
PAIR_TRIES = 200


def drawn_for_two(seed: int, schema_id: str) -> bool:
    """Whether the schema's 'no' sample should break two constraints: a hash
    of seed and id, so the draw is deterministic and an item keeps its
    sample when n grows."""
    num, den = TWO_CONSTRAINT_SHARE
    digest = hashlib.sha256(f"{seed}:{schema_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % den < num


@dataclass(frozen=True)
class Negative:
    """The 'no' sample of a schema and the occurrences it violates."""

    instance: JSONValue
    #: (keyword, schema path), one or two, in document order
    violations: tuple[tuple[str, str], ...]
    #: why a schema drawn for two violations got one (None: not a fallback)
    fallback: str | None = None
    #: a two-violation sample: "drawn", or "passed on by <schema id>"
    turn: str | None = None

    @property
    def keywords(self) -> list[str]:
        return [k for k, _ in self.violations]


def _violation_meta(
    case: CaseLike, violations: tuple[tuple[str, str], ...], formats: tuple[str, ...]
) -> dict[str, JSONValue]:
    """Item meta of a sample's violations. ``violated_keyword`` and
    ``violated_positions`` are the labels the reports group misses by, so a
    two-constraint sample gets its own ('maximum+type', 'begin+end');
    the lists name each occurrence."""
    keywords = [k for k, _ in violations]
    paths = [p for _, p in violations]
    positions: dict[str, JSONValue] = {}
    for fmt in formats if violations else ():
        found = [position_of(case.schema, p, fmt) for p in paths]
        positions[fmt] = found[0] if len(found) == 1 else "+".join(f or "unknown" for f in found)
    return {
        "label": "no" if violations else "yes",
        "violated_keyword": "+".join(keywords) or None,
        "violated_schema_path": paths[0] if len(paths) == 1 else None,
        "violated_positions": positions,
        "violated_keywords": list(keywords),
        "violated_schema_paths": list(paths),
        "violation_count": len(violations),
    }

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
    #: why N is twice -n (the terminal and report.md say it beside N)
    items_note = "2 per schema: its valid sample and an invalid one, so N = 2 x -n"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "items_note": self.items_note}

    # -- items --------------------------------------------------------------

    def build_items(self, cases: Cases) -> list[Item]:
        chooser = self.shot_chooser(cases)
        used: Counter[str] = Counter()
        owed: list[str] = []  # drawn schemas that could not carry two violations
        items: list[Item] = []
        for case in cases.test:
            negative = self._choose_negative(case, used, owed)
            if negative is None:
                continue
            used.update(negative.keywords)
            choice = chooser.validation(case) if chooser is not None else None
            items.append(self._item(case, None, choice))
            items.append(self._item(case, negative, choice))
        return items

    def _choose_negative(self, case: CaseLike, used: Counter[str], owed: list[str]) -> Negative | None:
        """The schema's 'no' sample: for a schema drawn for it (see
        ``drawn_for_two``), two violated constraints when two of its
        one-keyword violations combine; else one violation, and the turn
        passes to the next schema that can carry two (``owed``), so
        fallbacks do not lower the share."""
        single = self._choose_invalid(case, used)
        if single is None:
            return None
        one = Negative(single.instance, ((str(single.keyword), str(single.schema_path)),))
        drawn = drawn_for_two(self.options.seed, case.id)
        if not drawn and not owed:
            return one
        pair = self._choose_pair(case, used)
        if pair is None:
            if not drawn:
                return one
            owed.append(case.id)
            return replace(one, fallback="no two of its one-keyword violations combine into a sample "
                                         "breaking exactly those two in every output format; "
                                         "the turn passes to the next schema")
        turn = "drawn" if drawn else f"passed on by {owed.pop(0)}"
        return Negative(pair.instance, tuple(zip(pair.keywords, pair.schema_paths)), turn=turn)

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

    def _choose_pair(self, case: CaseLike, used: Counter[str]) -> PairViolation | None:
        """Two violations combined, preferring two different keywords, then
        the keywords used least so far (ties: names, schema paths)."""
        invalids = [InvalidInstance(keyword=i.keyword, schema_path=i.schema_path, instance=i.instance)
                    for i in case.invalid_instances]
        pairs = sorted(itertools.combinations(invalids, 2), key=lambda p: (
            p[0].keyword == p[1].keyword, used[p[0].keyword] + used[p[1].keyword],
            p[0].keyword, p[1].keyword, p[0].schema_path, p[1].schema_path))
        validator = validator_for(object_schema(case.schema))
        for pair in violate_two(validator, case.valid_instance, pairs, PAIR_TRIES):
            want = set(zip(pair.keywords, pair.schema_paths))
            if all(keeps_violations(pair.instance, case.schema, f, want) for f in self.output_format_names):
                return pair
        return None

    def _item(self, case: CaseLike, negative: Negative | None, choice: ShotChoice | None) -> Item:
        """The 'yes' item of the schema (negative None) or its 'no' item."""
        if negative is None:
            parts = ItemParts(f"{case.id}:valid", {"instance": case.valid_instance},
                              _violation_meta(case, (), self.schema_format_names), target="yes")
            return self.case_item(case, choice, parts)
        meta = _violation_meta(case, negative.violations, self.schema_format_names)
        if negative.fallback is not None:
            meta["two_constraint_fallback"] = negative.fallback
        if negative.turn is not None:
            meta["two_constraint_turn"] = negative.turn
        parts = ItemParts(f"{case.id}:{meta['violated_keyword']}", {"instance": negative.instance},
                          meta, target="no")
        return self.case_item(case, choice, parts)

    def error_keywords(self, item: Item, score: ItemScore) -> tuple[str, ...] | None:
        if score.correct is not False:
            return None
        if score.label != "no":
            return ()
        many = item.meta.get("violated_keywords")
        if isinstance(many, list):
            return tuple(str(k) for k in many)
        one = item.meta.get("violated_keyword")
        return (str(one),) if one else ()

    # -- prompts ------------------------------------------------------------

    def contract_schema(self, item: Item, condition: Condition) -> Schema | None:
        return dict(ANSWER_SCHEMA) if condition.contract == ANSWER_CONTRACT else None

    def _prompt(self, item: Item, condition: Condition, json_answer: bool) -> Prompt:
        sf, of = condition.text_axis("schema_format"), condition.text_axis("output_format")
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

    def turn_prompt(self, item: Item, condition: Condition, kind: TurnKind) -> Prompt:
        """The plain yes/no prompt for a "free" turn, else the one asking
        for {"answer": "yes"|"no"} (the same with the grammar on or off)."""
        return self._prompt(item, condition, kind != "free" and condition.contract == ANSWER_CONTRACT)

    def packaging_prompt(self, item: Item, condition: Condition, free_text: str) -> Prompt:
        return validation_packaging_prompt(self._prompt(item, condition, False), free_text)

    # -- scoring ------------------------------------------------------------

    def target_of(self, item: Item) -> str | None:
        """The item's verdict under the scoring's format mode. The stored
        target was found with formats asserted; with formats as annotations
        it is recomputed from the schema and sample the item holds, so a
        sample that breaks only ``format`` is a 'yes'."""
        stored = str(item.target) if item.target in LABELS else None
        if stored is None or self.options.format_assertion:
            return stored
        schema, instance = item.input.get("schema"), item.input.get("instance")
        if not isinstance(schema, (dict, bool)) or "instance" not in item.input:
            return stored
        try:
            valid = validator_for(object_schema(schema), formats="annotate").is_valid(instance)
        except ConformbenchError:  # a broken stored schema: keep the stored verdict
            return stored
        return "yes" if valid else "no"

    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        label = self.target_of(item)
        scored = self._score(label, condition, text, truncated)
        if label == item.target:
            return scored
        why = f"target {label!r}, not the stored {item.target!r}: `format` is an annotation here"
        return replace(scored, note=why if scored.note is None else f"{scored.note}; {why}")

    def _score(self, label: str | None, condition: Condition, text: str, truncated: bool) -> ItemScore:
        if condition.contract != ANSWER_CONTRACT:
            too_long = oversize(text)  # read by no reader, as a document's answer is not
            pred = None if too_long else parse_yes_no(text)
            note = None if pred is not None else too_long or "unparseable answer: first word is not yes/no"
            return ItemScore(valid=None, correct=pred is not None and pred == label, parsed=pred is not None,
                             label=label, prediction=pred, truncated=truncated, answer=pred, note=note)
        parsed, continued = parse_answer("json", text, dict(ANSWER_SCHEMA))
        if not parsed.ok:
            return ItemScore(valid=False, correct=False, parsed=False, label=label, truncated=truncated,
                             note=f"unparseable JSON answer: {parsed.error}")
        cut = truncated_sample(truncated, text, continued)
        valid = validator_for(dict(ANSWER_SCHEMA)).is_valid(parsed.value) and not cut
        pred = str(parsed.value["answer"]) if valid and isinstance(parsed.value, dict) else None
        note = None if valid else ("cut at max_tokens" if cut else "answer does not match {\"answer\": \"yes\"|\"no\"}")
        return ItemScore(valid=valid, correct=pred is not None and pred == label, parsed=True,
                         label=label, prediction=pred, truncated=truncated, answer=parsed.value, note=note)

