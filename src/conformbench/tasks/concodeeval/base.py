"""What the two ConCodeEval tasks (generation, validation) share: the dataset,
the 5 x 3 format grid, shots, arms and params.

Paper conditions map to arms as follows (see docs/concodeeval.md):
generation: the paper's prompt is ``prompt_only[schema]`` (the item's own
schema is the contract); ``constrained[schema]@engine`` adds the schema's
grammar, in the cell's output format (JSON, or the YAML/XML answer grammars
of engines that have them), to the same prompt. Validation: the
paper's plain "Respond with yes or no." prompt is ``unconstrained``;
``prompt_only[answer]`` / ``constrained[answer]`` ask for
{"answer": "yes"|"no"} and differ only by the grammar.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field, field_validator

from conformbench.arms.base import arms, split_arm_spec
from conformbench.errors import ConformbenchError, UnsupportedSchemaError, UsageError
from conformbench.formats.base import (
    PAPER_OUTPUT_FORMATS,
    PAPER_SCHEMA_FORMATS,
    UnrenderableSchemaError,
    output_formats,
    schema_formats,
)
from conformbench.formats.positions import position_bucket
from conformbench.jsontypes import JSONValue
from conformbench.records.generation import TurnBudgets
from conformbench.records.items import AxisValue, Condition, Item, ItemScore, TaskOptions
from conformbench.registry import did_you_mean
from conformbench.schemas.build import BuildOptions, build_dataset
from conformbench.schemas.case import load_dataset
from conformbench.tasks.base import Task
from conformbench.tasks.concodeeval.error_shots import ErrorShots, ShotChoice, ShotChooser, StaticShots
from conformbench.tasks.concodeeval.fence_reading import continues_open_fence, parse_answer, truncated_sample
from conformbench.tasks.concodeeval.prompts import SYSTEM_PROMPTS
from conformbench.tasks.concodeeval.shots import CaseLike, Shot, ShotPool
from conformbench.tasks.grid import Axis, TaskParams

__all__ = [
    "FEW_SHOT_VALUES",
    "ConCodeEvalOptions",
    "ConCodeEvalTask",
    "ItemParts",
    "continues_open_fence",
    "known_system",
    "load_cases",
    "parse_answer",
    "position_of",
    "stored_shots",
    "truncated_sample",
]

#: shots values that mean "the paper's few-shot setting" in a run spec; each
#: task maps them to its own count (generation 3, validation 2) so one spec
#: serves both tasks
FEW_SHOT_VALUES = (2, 3)


@dataclass(frozen=True)
class ItemParts:
    """What one task adds to the fields every ConCodeEval item carries (see
    ``ConCodeEvalTask.case_item``); ``input`` goes before the shots."""

    id: str
    input: dict[str, JSONValue]
    meta: dict[str, JSONValue]
    target: JSONValue = None


@dataclass(frozen=True)
class Cases:
    """The test cases, and the pool few-shot examples are drawn from (the
    whole dataset file, so with options.n below its size the shots can come
    from schemas that are not test items)."""

    test: list[CaseLike]
    pool: list[CaseLike]


def load_cases(options: TaskOptions) -> Cases:
    """options.dataset (a dir with dataset.jsonl, or the file; the first
    options.n are test cases) or, when None, the generator's cases for
    options.n (default: the builder's, the paper's 602) and options.seed,
    built exactly as ``conformbench dataset`` would (in a scratch dir)."""
    if options.dataset is not None:
        cases: list[CaseLike] = list(load_dataset(Path(options.dataset)))
        return Cases(cases if options.n is None else cases[: options.n], cases)
    with tempfile.TemporaryDirectory(prefix="conformbench-concodeeval-") as scratch:
        built = build_dataset(BuildOptions(out=Path(scratch), n=options.n, seed=options.seed))
    return Cases(list(built.cases), list(built.cases))


def stored_shots(item: Item) -> tuple[Shot, ...]:
    raw = item.input.get("shots") or []
    if not isinstance(raw, list):
        raise UsageError(f"item {item.id}: stored shots are not a list")
    return tuple(Shot.from_json(s) for s in raw)


def position_of(schema: JSONValue, schema_path: str, schema_format: str | None) -> str | None:
    """begin | middle | end of a keyword in the rendering the model saw;
    None where the path has no place in it (or the schema is a boolean)."""
    if schema_format is None or not isinstance(schema, dict):
        return None
    try:
        bucket = position_bucket(schema, schema_path, schema_format)
    except ConformbenchError:
        return None
    return None if bucket is None else str(bucket)


def _check_names(kind: str, names: tuple[str, ...], known: list[str]) -> tuple[str, ...]:
    for name in names:
        if name not in known:
            raise UsageError(f"unknown {kind} {name!r}{did_you_mean(name, known)}; known: {', '.join(known)}")
    if len(set(names)) != len(names):
        raise UsageError(f"{kind}s listed twice: {', '.join(names)}")
    return names


def known_system(value: str) -> str:
    """``value`` if it names a system prompt (else a did-you-mean)."""
    if value not in SYSTEM_PROMPTS:
        raise ValueError(f"unknown system prompt {value!r}{did_you_mean(value, list(SYSTEM_PROMPTS))}")
    return value


class ConCodeEvalOptions(TaskParams):
    """The options both ConCodeEval tasks take: the system prompt."""

    system: str = Field("none", description="System prompt of the ConCodeEval tasks.")

    @field_validator("system")
    @classmethod
    def _known_system(cls, value: str) -> str:
        return known_system(value)


class ConCodeEvalTask(Task):
    """Base of the generation and validation tasks: a grid of schema format
    × output format × shots (its axes) × arm × engine."""

    few_shot_count: ClassVar[int]
    options_model: ClassVar[type[BaseModel] | None] = ConCodeEvalOptions
    axes: ClassVar[tuple[Axis, ...]] = (
        Axis("schema_format", "schema_formats", "the format the schema is shown in", "--schema-format",
             "Schema format of the ConCodeEval tasks: {schema_formats} (repeatable)."),
        Axis("output_format", "output_formats", "the format the answer is asked in", "--output-format",
             "Output format of the ConCodeEval tasks: {output_formats} (repeatable)."),
        Axis("shots", "shots", "the few-shot count", "--shots", "Few-shot count (repeatable).", "K", int),
    )
    #: arms the task refuses, with the reason
    refused_arms: ClassVar[dict[str, str]] = {}
    #: the paper gives every answer 1024 new tokens (both experiments)
    default_budgets: ClassVar[TurnBudgets] = TurnBudgets(free=1024, json=1024, packaging=1024)
    shows_schema: ClassVar[bool] = True

    def __init__(self, options: TaskOptions) -> None:
        super().__init__(options)
        assert self.task_params is not None  # the options model above
        self.params: dict[str, str] = self.task_params.model_dump()
        self.schema_format_names = _check_names(
            "schema format", self.given_axis("schema_formats", str) or PAPER_SCHEMA_FORMATS, schema_formats.names()
        )
        self.output_format_names = _check_names(
            "output format", self.given_axis("output_formats", str) or PAPER_OUTPUT_FORMATS, output_formats.names()
        )
        self.shot_counts = self._shot_counts(self.given_axis("shots", int))
        if options.shots_from is not None and not any(self.shot_counts):
            raise UsageError(f"task {self.name}: shots_from picks few-shot examples, but the run "
                             f"has no few-shot setting (add shots {self.few_shot_count})")
        self.arm_names = self._arm_names(options.arms or self.default_arms)
        self._items: list[Item] | None = None
        #: schemas left out of the items, with the reason (reported)
        self.skipped: dict[str, str] = {}
        #: schema id -> schema format -> why the schema has no rendering in
        #: it: those cells are skipped for that schema alone (reported)
        self.missing_cells: dict[str, dict[str, str]] = {}

    def _shot_counts(self, shots: tuple[int, ...]) -> tuple[int, ...]:
        out: list[int] = []
        for value in shots or (0,):
            if value != 0 and value not in FEW_SHOT_VALUES:
                raise UsageError(
                    f"task {self.name}: shots must be 0 (zero-shot) or one of "
                    f"{', '.join(map(str, FEW_SHOT_VALUES))} (the paper's few-shot setting: "
                    f"{self.few_shot_count} shots for this task), not {value}"
                )
            count = 0 if value == 0 else self.few_shot_count
            if count not in out:
                out.append(count)
        return tuple(out)

    def _arm_names(self, given: tuple[str, ...]) -> tuple[str, ...]:
        for name in (names := tuple(self._without_contract(name) for name in given)):
            arms.get(name)  # unknown -> did-you-mean
            if name in self.refused_arms:
                raise UsageError(f"task {self.name}: arm {name!r} does not apply: {self.refused_arms[name]}")
        return tuple(dict.fromkeys(names))

    def _without_contract(self, name: str) -> str:
        """``prompt_only[schema]``, as reports name it, read as ``prompt_only`` (the grid fixes the contract)."""
        arm, contract = split_arm_spec(name)
        if contract is not None and contract not in self.contracts:
            raise UsageError(f"task {self.name}: arm {name!r} names contract {contract!r}; this task's "
                             f"contracts: {', '.join(self.contracts)} (the grid sets it: {arm!r} alone is enough)")
        return arm

    # -- grid ---------------------------------------------------------------

    def arm_specs(self) -> tuple[str, ...]:
        return self.arm_names

    def axis_choices(self) -> dict[str, tuple[AxisValue, ...]]:
        """The formats and shot counts checked above (the paper's by default)."""
        return {"schema_format": self.schema_format_names, "output_format": self.output_format_names,
                "shots": self.shot_counts}

    # -- items --------------------------------------------------------------

    def items(self) -> list[Item]:
        if self._items is None:
            self._items = self.build_items(load_cases(self.options))
            if not self._items:
                raise UsageError(f"task {self.name}: no usable items ({len(self.skipped)} schemas skipped)")
        return self._items

    def build_items(self, cases: Cases) -> list[Item]:
        raise NotImplementedError

    def error_keywords(self, item: Item, score: ItemScore) -> tuple[str, ...] | None:
        """What a scored generation got wrong: None when it is right, else
        the keywords involved (empty when none is: an unparseable answer);
        read by ``error_profile`` for error-driven shots."""
        raise NotImplementedError

    def shot_chooser(self, cases: Cases) -> ShotChooser | None:
        """None for a zero-shot-only run; the static choice; or, with
        options.shots_from, shots picked from that replay's zero-shot errors
        (read here, when items are built, never when a replay is scored)."""
        if not any(self.shot_counts):
            return None
        pool = ShotPool(cases.pool, self.schema_format_names, self.output_format_names)
        if self.options.shots_from is None:
            return StaticShots(pool)
        from conformbench.tasks.concodeeval.error_profile import read_profile

        return ErrorShots(pool, read_profile(Path(self.options.shots_from), self.name))

    def renderings_of(self, case: CaseLike) -> tuple[dict[str, JSONValue], dict[str, str]]:
        """The case's text in each schema format the task runs, and for each
        format it lacks, why (from the dataset record, or the renderer's
        refusal when the dataset was built without that format)."""
        out: dict[str, JSONValue] = {}
        missing: dict[str, str] = {}
        recorded = getattr(case, "missing_formats", None) or {}
        for fmt in self.schema_format_names:
            try:
                out[fmt] = str(case.renderings[fmt])
                continue
            except (KeyError, TypeError):
                pass
            if fmt in recorded:
                missing[fmt] = str(recorded[fmt])
                continue
            try:  # renderers take boolean schemas too; the protocol names only objects
                out[fmt] = schema_formats.get(fmt)().render(case.schema)
            except UnsupportedSchemaError as exc:
                missing[fmt] = str(exc)
        return out, missing

    def case_item(self, case: CaseLike, choice: ShotChoice | None, parts: ItemParts) -> Item:
        """An item of ``case``: its schema, the renderings and the shots
        (stored so scoring needs nothing but the replay), plus ``parts``.
        A schema format the schema has no rendering in is listed under
        ``missing_formats`` with the reason (only when there is one, so
        items of complete schemas stay as they were): its cells are skipped
        for this item alone (``missing_cell``), recorded in ``describe``."""
        renderings, missing = self.renderings_of(case)
        if missing:
            self.missing_cells[case.id] = dict(missing)
        shots = choice.shots if choice is not None else ()
        extra = choice.meta() if choice is not None else {}
        return Item(
            id=parts.id,
            input={
                "schema_id": case.id,
                "schema": case.schema,
                "renderings": renderings,
                **({"missing_formats": dict(missing)} if missing else {}),
                **parts.input,
                "shots": [s.to_json() for s in shots],
            },
            target=parts.target,
            meta={**parts.meta, "shot_ids": [s.schema_id for s in shots], **extra},
        )

    def cell_exclusion(self, item: Item, condition: Condition) -> str | None:
        """Why this item has no generation under this condition: its schema
        has no rendering in the condition's schema format (None otherwise).
        The other cells of the item run as usual."""
        missing = item.input.get("missing_formats")
        schema_format = condition.text_axis("schema_format")
        if isinstance(missing, dict) and schema_format in missing:
            return str(UnrenderableSchemaError(str(schema_format), str(missing[schema_format])))
        return None

    def attention_text(self, item: Item, condition: Condition) -> str:
        """The schema as the prompt shows it (``--attention`` measures attention on it)."""
        return self.schema_text(item, condition.text_axis("schema_format")).rstrip()

    def schema_text(self, item: Item, schema_format: str | None) -> str:
        renderings = item.input.get("renderings")
        missing = item.input.get("missing_formats")
        if isinstance(missing, dict) and schema_format in missing:
            raise UnrenderableSchemaError(str(schema_format), str(missing[schema_format]))
        if not isinstance(renderings, dict) or schema_format not in renderings:
            raise UsageError(f"item {item.id} has no {schema_format} rendering")
        return str(renderings[schema_format])

    def check_shots(self, item: Item, condition: Condition) -> tuple[Shot, ...]:
        if condition.count_axis("shots") == 0:
            return ()
        shots = stored_shots(item)
        if len(shots) != condition.count_axis("shots"):
            raise UsageError(
                f"item {item.id} stores {len(shots)} shots, condition asks for {condition.count_axis('shots')}"
            )
        return shots

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "paper": "ConCodeEval",
            "schema_formats": list(self.schema_format_names),
            "output_formats": list(self.output_format_names),
            "shots": list(self.shot_counts),
            "params": dict(self.params),
            **({"shots_from": self.options.shots_from} if self.options.shots_from else {}),
            "skipped_schemas": dict(self.skipped),
            **({"missing_formats": {k: dict(v) for k, v in self.missing_cells.items()}} if self.missing_cells else {}),
        }
