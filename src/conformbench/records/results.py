"""Typed, versioned scoring output (what report.json holds). Reports are
rendered from these records alone."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_serializer

from conformbench.records.base import OMITTED_AT_DEFAULT, FrozenRecord, SparseRecord
from conformbench.records.items import Condition
from conformbench.records.migrations import condition_as_v2

__all__ = [
    "REPORT_FORMAT",
    "ArmMetrics",
    "Comparison",
    "Delta",
    "Exclusion",
    "Flips",
    "LedgerRow",
    "Quadrants",
    "Rate",
    "ReplaySource",
    "SampleState",
    "ScoredRun",
    "SectionResult",
    "TaskModelResult",
]

REPORT_FORMAT = "conformbench.report/1"


_Rec = FrozenRecord


class Rate(_Rec):
    """k of n, with a 95% Wilson interval."""

    k: int
    n: int
    rate: float
    ci95: tuple[float, float]


class Quadrants(_Rec):
    valid_right: int
    valid_wrong: int
    invalid_right: int
    invalid_wrong: int


class ArmMetrics(_Rec):
    """One condition of one task on one model, over all N items of the
    condition (an item leaves a condition only when its engine could not
    compile the schema, or the run has no generation for it yet).
    None means n/a (no contract: no validity; no gold answer: no accuracy)."""

    key: str
    condition: Condition
    n: int
    validity: Rate | None
    accuracy: Rate | None
    wrong_but_valid: Rate | None
    executable_accuracy: Rate | None
    parsed: Rate | None
    quadrants: Quadrants | None
    #: generations that hit their token budget
    truncated: int
    #: generations the loop stop ended (a degenerate loop, counted apart)
    looped: int = 0
    #: of the truncated ones: cut inside a runaway number sequence (counting
    #: on, one endless number), which a larger budget is unlikely to finish
    runaway: int = 0
    errors: int
    mean_completion_tokens: float
    #: the engine's own note on what it compiled but did not enforce ->
    #: generations it applied to (left to the validator)
    unenforced: dict[str, int] = Field(default_factory=dict)

    @field_serializer("condition")
    def _report_layout(self, condition: Condition) -> dict[str, object]:
        """The condition as reports have always written it (version 2 of
        the replay's layout, ``condition_as_v2``): report.json unchanged."""
        return {"arm": condition.arm, "contract": condition.contract, "engine": condition.engine,
                **condition_as_v2(condition.axes)}


class Delta(_Rec):
    """to - from of one metric over the paired items."""

    metric: str
    from_rate: float
    to_rate: float
    delta: float
    ci95: tuple[float, float]
    excludes_0: bool
    #: discordant pairs: (from yes, to no), (from no, to yes)
    discordant: tuple[int, int]
    mcnemar_p: float
    #: how ci95 was made: "bootstrap" (paired percentile bootstrap) or
    #: "newcombe" (Newcombe's continuity-corrected hybrid score interval, used
    #: below scoring.stats' thresholds); reports before the choice: bootstrap
    method: Literal["bootstrap", "newcombe"] = "bootstrap"
    #: an effect: ci95 excludes 0 and the exact McNemar p < 0.05 (None in
    #: reports made before this field: read excludes_0)
    detected: bool | None = None
    #: the smallest difference this N detects with 80% power (exact McNemar,
    #: alpha 0.05, at the observed discordance); None: none can be
    mdd80: float | None = None
    #: the difference asked about (--detect) and the items it needs at 80% power
    detect: float | None = None
    n_needed: int | None = None


class Flips(_Rec):
    right_to_wrong: int
    wrong_to_right: int


class Comparison(_Rec):
    from_key: str
    to_key: str
    #: headline: prompt_only[S] -> constrained[S] (only the grammar differs);
    #: confounded: against unconstrained (prompt and grammar both differ);
    #: policy: a multi-round arm (repair...) against an arm it is compared with
    role: Literal["headline", "confounded", "policy"]
    n: int
    deltas: list[Delta]
    transitions: dict[str, int]
    flips: Flips | None


class SampleState(_Rec):
    """One later sample of an item under a condition, as the ledger shows it."""

    state: str
    #: hit max_tokens or was loop-stopped; of those, cut inside a runaway
    truncated: bool = False
    runaway: bool = False


class RoundState(_Rec):
    """An earlier round of a multi-round arm's answer: its state and the
    errors it was re-asked with ('keyword at /path', or the parse error)."""

    state: str
    errors: list[str] = Field(default_factory=list)


class LedgerRow(SparseRecord):
    item_id: str
    #: condition key -> "valid/right" | "invalid/wrong" | "n/a/right" ...
    states: dict[str, str]
    #: condition keys whose generation hit max_tokens or was loop-stopped
    truncated: list[str] = Field(default_factory=list)
    #: of those, condition keys cut inside a runaway number sequence
    runaway: list[str] = Field(default_factory=list)
    #: with ``[decoding] samples`` K > 1: condition key -> samples 1..K-1
    #: in order (sample 0 is ``states``); left out at K = 1
    later_samples: Annotated[dict[str, list[SampleState]], OMITTED_AT_DEFAULT] = Field(default_factory=dict)
    #: a multi-round arm's earlier rounds (the state above is its last
    #: answer's): condition key -> rounds in order; left out when none
    rounds: Annotated[dict[str, list[RoundState]], OMITTED_AT_DEFAULT] = Field(default_factory=dict)

    def samples(self, key: str) -> list[SampleState]:
        """Every sample of the item under condition ``key``, sample 0 first
        (one at K = 1; none where the item has no generation there; sample 0
        reads "excluded" where only later samples are scored)."""
        if key not in self.states and key not in self.later_samples:
            return []
        first = SampleState(state=self.states.get(key, "excluded"), truncated=key in self.truncated,
                            runaway=key in self.runaway)
        return [first, *self.later_samples.get(key, [])]


class Exclusion(_Rec):
    """An item left out of one condition (never out of the others)."""

    item_id: str
    condition: str | None
    reason: str


class SectionResult(_Rec):
    name: str
    title: str
    data: dict[str, Any]
    metrics: dict[str, float] = Field(default_factory=dict)
    #: gate metrics n/a here, keyed as ``metrics`` keys them, with why
    #: (``--fail-if`` on one of them is not evaluable: exit 2)
    unmeasured: dict[str, str] = Field(default_factory=dict)


class TaskModelResult(_Rec):
    task: str
    model: str
    correctness_label: str
    #: the task's own description (Task.describe), e.g. skipped schemas
    task_info: dict[str, Any] = Field(default_factory=dict)
    #: items scored; each condition's own N is in its ArmMetrics
    n: int
    arms: list[ArmMetrics]
    comparisons: list[Comparison]
    ledger: list[LedgerRow]
    exclusions: list[Exclusion]
    sections: list[SectionResult] = Field(default_factory=list)
    #: conditions whose numbers a setting may have moved (answers cut at the
    #: token budget), one line each
    warnings: list[str] = Field(default_factory=list)


class ReplaySource(SparseRecord):
    path: str
    sha256: str
    run_id: str
    created: str
    conformbench_version: str
    spec: dict[str, Any]
    hardware: dict[str, Any]
    models: list[dict[str, Any]]
    #: answers recorded (the replay's generation records, every round of a
    #: multi-round arm counted; docs/run.md, "What is counted")
    generations: int
    truncated_tail: int
    #: records replaced by a later try of the same generation (a resumed run
    #: redoes failed ones); not scored
    superseded: int = 0
    #: of those, answers (not errors) replaced by a later line: a redo after
    #: a budget change, or a duplicated line
    replaced_answers: int = 0
    #: items x conditions (each item under each condition, each sample): what
    #: ``run`` counts; None in reports made before it was recorded
    units: Annotated[int | None, OMITTED_AT_DEFAULT] = None
    #: answers taken from another arm's identical request (generated once)
    shared: Annotated[int, OMITTED_AT_DEFAULT] = 0
    #: the header's build facts (``ReplayHeader.build``); left out when not recorded
    build: Annotated[dict[str, Any], OMITTED_AT_DEFAULT] = Field(default_factory=dict)
    #: answers each server of a pool made ("label @ server URL" -> count);
    #: left out for runs on one server
    servers: Annotated[dict[str, int], OMITTED_AT_DEFAULT] = Field(default_factory=dict)


class ScoredRun(_Rec):
    format: str = REPORT_FORMAT
    bootstrap: dict[str, int]
    #: the difference (a share) each comparison's items-needed is for
    #: (--detect); None in reports made before it existed
    detect: float | None = None
    replays: list[ReplaySource]
    results: list[TaskModelResult]
    #: run sections: analyses across every task and model (see scoring.analyses)
    sections: list[SectionResult] = Field(default_factory=list)
    #: how ``format`` was read: "annotate" (an annotation, JSON Schema
    #: 2020-12's default) or "assert" (each draft's format vocabulary checked,
    #: --format-assertion); None in reports made before the choice existed,
    #: which asserted formats
    format_mode: Literal["assert", "annotate"] | None = None
