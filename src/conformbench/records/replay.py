"""Typed, versioned records of a replay file (JSON Lines).

A replay is: one ``header`` line, then ``model``, ``item`` and ``generation``
lines in the order they happened. Everything scoring needs is in it. The
header names its layout (``format`` and an integer ``version``); an older
layout is read through ``records.migrations``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from conformbench.records.attention_record import AttentionRecord
from conformbench.records.base import INT_BOUND, OMITTED_AT_DEFAULT, FrozenRecord, SparseRecord
from conformbench.records.items import Condition, Item
from conformbench.records.mask_toll import MaskToll
from conformbench.records.migrations import REPLAY_FAMILY, REPLAY_VERSION, migrate_header
from conformbench.records.prompt import Prompt
from conformbench.records.spec import ReplaySpec
from conformbench.records.stored_text import (
    STORE_LIMIT_CHARS,
    STORED_EDGE_CHARS,
    cut_for_storage,
    stored_answer,
    stored_prompt,
)
from conformbench.records.tool_calls import RawToolCall, ToolShape

__all__ = [
    "REPLAY_FAMILY",
    "REPLAY_VERSION",
    "GenerationRecord",
    "ItemRecord",
    "ModelRecord",
    "ReplayHeader",
    "ReplayRecord",
    "StepCost",
    "as_stored",
    "sample_key",
]

_Record = FrozenRecord


class ReplayHeader(SparseRecord):
    kind: Literal["header"] = "header"
    format: Literal["conformbench.replay"] = REPLAY_FAMILY
    #: the header's layout (``records.migrations``): a replay writes
    #: the current one; an older one is migrated when read, a newer one refused
    version: int = Field(default=REPLAY_VERSION, ge=1, le=REPLAY_VERSION)
    run_id: str
    created: str
    conformbench_version: str
    #: what the run spec says of the generations and their scoring
    spec: ReplaySpec
    hardware: dict[str, Any] = Field(default_factory=dict)
    #: what decides whether a rerun gives the same texts (``runinfo.BUILD_FIELDS``):
    #: CPU features, llama.cpp build and system info, torch, threads, dtype;
    #: empty in replays made before it was recorded
    build: dict[str, Any] = Field(default_factory=dict)
    #: each time the run was grown (a larger n, budgets or samples) or resumed
    #: on another build (runner/ledger/header.py), oldest first
    grown: list[str] = Field(default_factory=list)
    #: the version of each task (``Task.version``) the run was made with;
    #: left out of headers made before it was recorded, which read as before
    task_versions: Annotated[dict[str, Annotated[int, Field(ge=1, le=INT_BOUND)]], OMITTED_AT_DEFAULT] = Field(
        default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _current_layout(cls, data: Any) -> Any:
        return migrate_header(data)


class ModelRecord(_Record):
    """A backend loaded for the run: its label and metadata (sha256, versions,
    threads, decoding settings) and the canary verdict per engine."""

    kind: Literal["model"] = "model"
    label: str
    backend: str
    metadata: dict[str, Any]
    canary: dict[str, Any] = Field(default_factory=dict)
    #: written at the end of a run with its final counters (requests,
    #: errors...): it replaces, for readers, the record the same run wrote
    #: after the canary (the last earlier one of the label)
    final: bool = False


class ItemRecord(_Record):
    kind: Literal["item"] = "item"
    task: str
    item: Item


#: a token count a replay holds: what a server's usage is taken as
#: (``backends.openai.answers``), 0 <= n < 2**63; a replay is untrusted data,
#: and a negative or huge count would be a nonsense cost, never an error
TokenCount = Annotated[int, Field(ge=0, lt=INT_BOUND)]
#: seconds a replay holds: finite, non-negative and under 1e18 (a NaN
#: compares false with every gate's threshold and would pass it silently;
#: summed, 1e308 overflows to inf)
Seconds = Annotated[float, Field(ge=0.0, lt=1e18, allow_inf_nan=False)]


class StepCost(FrozenRecord):
    """What the free step an answer packaged cost (reason_then_constrain's
    free turn): its own call's tokens, seconds and finish reason. A step
    another arm's identical turn generated is recorded whole here too (the
    cost section counts a shared call for every arm that uses it)."""

    prompt_tokens: TokenCount
    completion_tokens: TokenCount
    seconds: Seconds
    finish_reason: Literal["stop", "length", "loop", "error"]


class GenerationRecord(SparseRecord):
    kind: Literal["generation"] = "generation"
    task: str
    model: str
    item_id: str
    condition: Condition
    #: the prompt as sent (messages) and as rendered to text by the backend
    prompt: Prompt
    text: str = ""
    finish_reason: Literal["stop", "length", "loop", "error", "excluded"] = "stop"
    prompt_tokens: TokenCount = 0
    completion_tokens: TokenCount = 0
    seconds: Seconds = 0.0
    compile_seconds: Seconds = 0.0
    engine_input: str | None = None
    #: the free-text turn reused by reason_then_constrain
    free_text: str | None = None
    error: str | None = None
    #: why the item was excluded (engine could not compile the schema)
    excluded: str | None = None
    #: what the engine compiled but does not enforce (llguidance's lenient mode)
    unenforced: list[str] = Field(default_factory=list)
    #: beam width of a beam-search generation (left out for greedy, so
    #: greedy replays are what they were)
    beams: Annotated[int | None, OMITTED_AT_DEFAULT] = None
    #: attention at the answer position (``--attention``; left out when off)
    attention: Annotated[AttentionRecord | None, OMITTED_AT_DEFAULT] = None
    #: which of ``[decoding] samples`` generations of the item and condition
    #: this is, and the seed it was decoded with (the run's seed + sample);
    #: both left out for sample 0, so single-sample replays are what they were
    sample: Annotated[int, OMITTED_AT_DEFAULT] = Field(default=0, ge=0)
    seed: Annotated[int | None, OMITTED_AT_DEFAULT] = None
    #: which answer of a multi-round arm this is (0: the first; left out
    #: for 0, so one-answer replays are what they were)
    round: Annotated[int, OMITTED_AT_DEFAULT] = Field(default=0, ge=0)
    #: the temperature of a round sampled at its own (resample's); left out otherwise
    temperature: Annotated[float | None, OMITTED_AT_DEFAULT] = None
    #: the generation this answer's text was taken from, when another
    #: arm's turn was the same request (its key's last part): generated
    #: once, its tokens and seconds are that generation's
    shared: Annotated[str | None, OMITTED_AT_DEFAULT] = None
    #: False for a turn of a condition with an engine that ran without the
    #: grammar (fallback's first round); left out otherwise
    grammar: Annotated[bool | None, OMITTED_AT_DEFAULT] = None
    #: think_then_constrain: the free text before the stop string (``text``
    #: is the answer after it) and why the decoder closed it itself ("budget"
    #: or "loop"; left out where the model wrote the stop string); both
    #: left out for every other arm
    thinking: Annotated[str | None, OMITTED_AT_DEFAULT] = None
    think_cut: Annotated[Literal["budget", "loop"] | None, OMITTED_AT_DEFAULT] = None
    #: the server that made it, where a pool of servers served the model
    #: (``--base-url`` given more than once; scheme, host, port and path
    #: only); left out otherwise, so one-server replays are what they were
    server: Annotated[str | None, OMITTED_AT_DEFAULT] = Field(default=None, max_length=2000)
    #: what the token mask took from the model (``records.mask_toll``; local
    #: backends under a mask engine); left out otherwise, so replays without
    #: it are what they were
    mask_toll: Annotated[MaskToll | None, OMITTED_AT_DEFAULT] = None
    #: what the free step in ``free_text`` cost (its call's tokens, seconds
    #: and finish reason; the record's own are the packaging turn's); left
    #: out for an answer without a step and in replays made before it was
    #: recorded (read as None: the step's cost is then unknown)
    step: Annotated[StepCost | None, OMITTED_AT_DEFAULT] = None
    #: an answer over the parse limit is stored cut (``records.stored_text``):
    #: the whole answer's length in characters and sha256; both left out for
    #: an answer stored whole, so such replays are what they were
    text_chars: Annotated[int | None, OMITTED_AT_DEFAULT] = Field(default=None, gt=STORE_LIMIT_CHARS, lt=1 << 63)
    text_sha256: Annotated[str | None, OMITTED_AT_DEFAULT] = Field(default=None, pattern="^[0-9a-f]{64}$")
    #: the same for a thinking over the parse limit, stored cut
    thinking_chars: Annotated[int | None, OMITTED_AT_DEFAULT] = Field(default=None, gt=STORE_LIMIT_CHARS, lt=1 << 63)
    thinking_sha256: Annotated[str | None, OMITTED_AT_DEFAULT] = Field(default=None, pattern="^[0-9a-f]{64}$")
    #: a tools arm's answer (``records.tool_calls``): the request's shape (the
    #: function names sent, tool choice, strict; the body is ``engine_input``),
    #: each call as the server returned it (``text`` is their scored form,
    #: ``[]`` for none), the text the model wrote beside them and the
    #: server's own finish reason (``tool_calls``, ``stop``...); all left
    #: out for every other arm, so such replays are what they were
    tools: Annotated[ToolShape | None, OMITTED_AT_DEFAULT] = None
    tool_calls: Annotated[list[RawToolCall] | None, OMITTED_AT_DEFAULT] = None
    content: Annotated[str | None, OMITTED_AT_DEFAULT] = Field(default=None, max_length=STORE_LIMIT_CHARS)
    server_finish_reason: Annotated[str | None, OMITTED_AT_DEFAULT] = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _cut_text_is_cut(self) -> GenerationRecord:
        for name in ("text", "thinking"):
            chars, sha256 = getattr(self, f"{name}_chars"), getattr(self, f"{name}_sha256")
            if (chars is None) != (sha256 is None):
                raise ValueError(f"{name}_chars and {name}_sha256 go together (a text stored cut)")
            if chars is not None and len(getattr(self, name) or "") > 2 * STORED_EDGE_CHARS + 200:
                raise ValueError(f"a {name} stored cut holds at most {2 * STORED_EDGE_CHARS + 200} characters")
        return self

    @model_validator(mode="after")
    def _step_has_free_text(self) -> GenerationRecord:
        if self.step is not None and self.free_text is None:  # the runner writes it only with its step's text
            raise ValueError("step (a free step's cost) without free_text (the free step's text)")
        return self

    @property
    def thought(self) -> str | None:
        """The thinking this record stands for (a ``CutText`` when stored cut)."""
        return None if self.thinking is None else stored_answer(self.thinking, self.thinking_chars,
                                                                self.thinking_sha256)

    @property
    def answer(self) -> str:
        """The answer this record stands for: ``text``, or a ``CutText``
        carrying the whole answer's length when it was stored cut."""
        return stored_answer(self.text, self.text_chars, self.text_sha256)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.task, self.model, self.item_id, sample_key(self.condition.key, self.sample, self.round))

    @property
    def unit_key(self) -> tuple[str, str, str, str]:
        """The key of the unit's first answer (every round of it shares it)."""
        return (self.task, self.model, self.item_id, sample_key(self.condition.key, self.sample))


def as_stored(gen: GenerationRecord) -> GenerationRecord:
    """``gen`` as a replay stores it (``records.stored_text``): its answer,
    thinking, free text, prompt and request body over the parse limit cut.
    Every record written goes through it (``ReplayWriter``), imports too;
    a record already stored so is returned as it is."""
    text, chars, sha256 = cut_for_storage(gen.answer)
    thought, thinking_chars, thinking_sha256 = cut_for_storage(gen.thought or "")
    update = {"text": text, "text_chars": chars, "text_sha256": sha256,
              "thinking": None if gen.thinking is None else thought, "thinking_chars": thinking_chars,
              "thinking_sha256": thinking_sha256, "prompt": stored_prompt(gen.prompt),
              "free_text": None if gen.free_text is None else cut_for_storage(gen.free_text)[0],
              "engine_input": None if gen.engine_input is None else cut_for_storage(gen.engine_input)[0]}
    if all(getattr(gen, name) == value for name, value in update.items()):
        return gen
    return gen.model_copy(update=update)


def sample_key(condition_key: str, sample: int, round_: int = 0) -> str:
    """The last part of a generation's key: the condition's key for sample
    0 (as before samples existed), ``KEY#sample=S`` for a later sample, and
    ``#round=R`` after either for a later round of a multi-round arm."""
    key = condition_key if sample == 0 else f"{condition_key}#sample={sample}"
    return key if round_ == 0 else f"{key}#round={round_}"


ReplayRecord = ReplayHeader | ModelRecord | ItemRecord | GenerationRecord
