"""The run spec as a record: models x tasks x arms x engines x formats x
shots and decoding settings. It is stored in each replay header, so scoring
reads it without the runner. Parsing with name checks against the registries
is ``conformbench.runner.spec.parse_spec``."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any, cast

import annotated_types
from pydantic import ConfigDict, Field, field_validator

from conformbench.errors import UsageError
from conformbench.records.base import (
    INT_BOUND,
    OMITTED_AT_DEFAULT,
    OPERATIONAL,
    FiniteRecord,
    Operational,
    Range,
    SparseRecord,
)
from conformbench.records.generation import (
    BackendConfig,
    Concurrency,
    ContextTokens,
    DecodingSettings,
    Retries,
    Threads,
    TimeoutSeconds,
    TurnBudgets,
    redacted_url,
)
from conformbench.records.items import AxisValue, TaskOptions

__all__ = [
    "AXIS_KEYS",
    "DEFAULT_LOCAL_ENGINE",
    "DEFAULT_MAX_ROUNDS",
    "SCORING_PARAMS",
    "SERVER_ENGINE",
    "ArmRecipe",
    "DecodingSpec",
    "ModelSpec",
    "ReplaySpec",
    "RunSpec",
    "TaskSpec",
    "spec_bounds",
]

#: engine name of server-side decoding (HTTP backends)
SERVER_ENGINE = "server"
#: the engine of backends that constrain in-process, when a run names none
DEFAULT_LOCAL_ENGINE = "llguidance"
#: answers a multi-round arm (repair, resample, fallback) gives at most per
#: item, the first included, unless the run says otherwise (``--max-rounds``)
DEFAULT_MAX_ROUNDS = 3


_Strict = FiniteRecord

#: task params that choose how answers are checked, not what is generated
#: (custom's matcher): a rerun with others resumes, ``score --match`` rescores
SCORING_PARAMS = ("match", "normalize", "tolerance")


class ModelSpec(_Strict):
    """One model: a label for reports plus the backend's options."""

    label: str = Field(min_length=1)
    backend: str = "llamacpp"
    #: GGUF path (llamacpp; None = the embedded model) or model name (HTTP)
    model: str | None = None
    #: the server's URL, or a list of them: a pool of servers serving the
    #: model (a list of one is that one URL, so its replay header is as before)
    base_url: str | list[str] | None = None
    #: the numeric options' types declare their ranges (``records.base.Range``),
    #: BackendConfig's: a spec is refused before anything is written; the
    #: ``OPERATIONAL`` ones change how a run is carried out, not what it
    #: generates (greedy or seeded decoding gives the same text whatever the
    #: threads, requests in flight, timeout or retries): a resume ignores them
    threads: Annotated[Threads, OPERATIONAL] = None
    n_ctx: ContextTokens = 4096
    concurrency: Annotated[Concurrency, OPERATIONAL] = 4
    timeout_s: Annotated[TimeoutSeconds, OPERATIONAL] = 120.0
    max_retries: Annotated[Retries, OPERATIONAL] = 4
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("base_url")
    @classmethod
    def _one_or_more_urls(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list):
            if not value:
                raise UsageError("base_url: give a server's URL or a list of one or more, not an empty list")
            return value[0] if len(value) == 1 else value
        return value

    @property
    def base_urls(self) -> tuple[str, ...]:
        """Every server's URL (none for a backend without servers)."""
        return (self.base_url,) if isinstance(self.base_url, str) else tuple(self.base_url or ())

    def backend_config(self) -> BackendConfig:
        return BackendConfig(
            model=self.model,
            base_url=self.base_url if not isinstance(self.base_url, list) else tuple(self.base_url),
            threads=self.threads,
            n_ctx=self.n_ctx,
            concurrency=self.concurrency,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
            extra=dict(self.extra),
        )


#: the keys of a task's table that choose the values of an axis the task
#: chooses by a spec key (``tasks.grid.Axis``; ``TaskOptions.axes``): the
#: ConCodeEval tasks', kept at the table's top level, where every replay
#: header has held them (a header writes them for every task, defaults
#: included, so a resume compares them as before)
AXIS_KEYS = ("schema_formats", "output_formats", "shots")


class TaskSpec(_Strict, SparseRecord):
    """One task and the grid it runs on (empty lists: the task's defaults)."""

    name: str
    n: int | None = Field(default=None, ge=1, le=INT_BOUND - 1)  # an int64 (2**63 - 1 at most)
    seed: int = Field(default=0, ge=-INT_BOUND, le=INT_BOUND - 1)  # an int64
    arms: list[str] = Field(default_factory=list)
    #: empty: the models' backend's default engine (``parse_spec`` fills it in)
    engines: list[str] = Field(default_factory=list)
    schema_formats: list[str] = Field(default_factory=list)
    output_formats: list[str] = Field(default_factory=list)
    shots: list[int] = Field(default_factory=lambda: [0])
    dataset: str | None = None
    #: the sha256 of the dataset's content (a folder's: of its files' names
    #: and contents) when the run was made: a resume or a fold checks the
    #: content, not the path (``runner.ledger.content``); left out of headers
    #: without a dataset, so theirs read and write byte for byte as before
    dataset_sha256: Annotated[str | None, OMITTED_AT_DEFAULT, OPERATIONAL] = None
    #: its ``SCORING_PARAMS`` choose how answers are checked: no part of the
    #: generations' key
    params: Annotated[dict[str, Any], Operational(keys=SCORING_PARAMS)] = Field(default_factory=dict)
    #: a zero-shot replay whose errors pick the few-shot examples (ConCodeEval)
    shots_from: str | None = None
    #: budget of every turn of this task (over decoding.max_tokens)
    max_tokens: int | None = Field(default=None, ge=1, le=1 << 20)
    #: budgets of one turn (over max_tokens); unset: the task's own default
    #: (validbutwrong's 384 per turn for the arms tasks, the ConCodeEval
    #: paper's 1024 for generation and validation)
    free_tokens: int | None = Field(default=None, ge=1, le=1 << 20)
    json_tokens: int | None = Field(default=None, ge=1, le=1 << 20)
    packaging_tokens: int | None = Field(default=None, ge=1, le=1 << 20)
    #: think_then_constrain's thinking budget (its one call adds the answer's)
    think_tokens: int | None = Field(default=None, ge=1, le=1 << 20)
    #: the string that ends think_then_constrain's thinking (None: ``</think>``)
    think_stop: str | None = Field(default=None, min_length=1, max_length=64)

    def axes(self) -> dict[str, tuple[AxisValue, ...]]:
        """The values this table gives the spec-key axes (``AXIS_KEYS``), by
        key; a key left at its default is left out (the task's own default)."""
        out: dict[str, tuple[AxisValue, ...]] = {}
        for key in AXIS_KEYS:
            value = getattr(self, key)
            if value != TaskSpec.model_fields[key].get_default(call_default_factory=True):
                out[key] = tuple(value)
        return out

    def budgets(self, decoding: DecodingSpec, default: TurnBudgets) -> TurnBudgets:
        """Each turn's budget: the turn's own key, else this task's
        max_tokens, else decoding.max_tokens, else the task's default."""

        def pick(own: int | None, fallback: int) -> int:
            for value in (own, self.max_tokens, decoding.max_tokens):
                if value is not None:
                    return value
            return fallback

        return TurnBudgets(
            free=pick(self.free_tokens, default.free),
            json=pick(self.json_tokens, default.json),
            packaging=pick(self.packaging_tokens, default.packaging),
            think=pick(self.think_tokens, default.of("think")),
        )

    def options(self) -> TaskOptions:
        return TaskOptions(
            n=self.n,
            seed=self.seed,
            arms=tuple(self.arms),
            engines=tuple(self.engines),
            axes=self.axes(),
            dataset=self.dataset,
            params=dict(self.params),
            shots_from=self.shots_from,
        )


class DecodingSpec(_Strict):
    #: budget of every turn of every task (None: each task's own budgets)
    max_tokens: int | None = Field(default=None, ge=1, le=1 << 20)
    temperature: float = Field(default=0.0, ge=0.0, le=100.0)
    #: a request's seed is this plus the sample and a resampled round's
    #: offset (at most 100 + 20 x 1000): within llama.cpp's 32 bits
    seed: int = Field(default=0, ge=0, le=(1 << 31) - 1)
    #: end degenerate loops early (see conformbench.backends.loops)
    loop_stop: bool = True
    #: beam width (1: greedy; N > 1: beam search, on a backend whose manifest
    #: declares ``beams``: llamacpp, transformers)
    beams: int = Field(default=1, ge=1, le=16)
    #: capture attention on the schema at the answer position (a backend whose
    #: manifest declares ``attention``: llamacpp, transformers)
    attention: bool = False
    #: keep the mask's toll per step in the replay, not only per generation
    #: (local backends under a mask engine: records.mask_toll)
    mask_trace: bool = False
    #: generations per item and condition (sample s is decoded with seed +
    #: s); more than 1 needs temperature > 0 and beams = 1
    samples: int = Field(default=1, ge=1, le=100)
    #: answers a multi-round arm gives at most per item, the first included
    #: (None: DEFAULT_MAX_ROUNDS; a run with such an arm records the number)
    max_rounds: int | None = Field(default=None, ge=1, le=20)

    @property
    def rounds(self) -> int:
        return DEFAULT_MAX_ROUNDS if self.max_rounds is None else self.max_rounds

    def settings(self, max_tokens: int) -> DecodingSettings:
        return DecodingSettings(
            max_tokens=max_tokens,
            temperature=self.temperature,
            seed=self.seed,
            loop_stop=self.loop_stop,
            beams=self.beams,
            attention=self.attention,
            mask_trace=self.mask_trace,
        )


class ArmRecipe(_Strict):
    """How an arm conformbench does not ship was made (``arms.base.Recipe``):
    its policy (a factory's name or a function's ``module:qualname``) and the
    factory's arguments (a function by its ``module:qualname``)."""

    policy: str = Field(min_length=1, max_length=1000)
    arguments: dict[str, Any] = Field(default_factory=dict)


class ReplaySpec(_Strict):
    """What a replay header records of a run spec: everything that defines
    the generations and how they are scored (the output folder and the
    display flags are a run's own, ``RunSpec``). A header writes every key,
    defaults included; a key a header left out reads as its default (the
    layouts before replay format 2 left defaults out: ``records.
    migrations``)."""

    #: a RunSpec given where a ReplaySpec goes is refused (its out and
    #: display keys are no part of a header): ``RunSpec.replay_spec()``
    model_config = ConfigDict(revalidate_instances="subclass-instances")

    models: list[ModelSpec] = Field(min_length=1)
    tasks: list[TaskSpec] = Field(min_length=1)
    decoding: DecodingSpec = Field(default_factory=DecodingSpec)
    #: the run's arms that conformbench does not ship, by name, with their
    #: recipes (filled in by ``parse_spec``; the shipped arms are the version's)
    arms: dict[str, ArmRecipe] = Field(default_factory=dict)
    #: scoring: check ``format`` (each draft's format vocabulary); False: formats
    #: are annotations, JSON Schema 2020-12's default and the ConCodeEval paper's
    format_assertion: bool = False

    def as_dict(self) -> dict[str, Any]:
        """Every key, defaults included (what resuming compares: a key an
        older header left out compares as its default)."""
        return self.model_dump(mode="json")

    def as_recorded(self) -> dict[str, Any]:
        """The keys the header line holds, as it holds them (a report's
        ``sources``: a replay rescored gives the report it gave)."""
        return self.model_dump(mode="json", exclude_unset=True)

    def task_options(self, task: TaskSpec) -> TaskOptions:
        """The options ``task`` is built with under this spec (its own, plus
        the run-wide scoring options)."""
        return dataclasses.replace(task.options(), format_assertion=self.format_assertion)

    def task_spec(self, name: str) -> TaskSpec:
        for task in self.tasks:
            if task.name == name:
                return task
        raise UsageError(f"task {name!r} is not in the run spec")

    def run_spec(self, **run_only: Any) -> RunSpec:
        """The run spec of this header, with ``run_only``'s run keys (out, quiet...)."""
        return RunSpec.model_validate({**self.as_dict(), **run_only})


class RunSpec(ReplaySpec):
    out: Path = Path("conformbench-out")
    #: the constraint canary; live runs keep it on unless turned off explicitly
    canary: bool = True
    quiet: bool = False
    json_summary: bool = False

    def replay_spec(self) -> ReplaySpec:
        """The part of the spec a replay header records (and a resume
        compares), every key set: a key in a server URL's query never
        reaches it (``redacted_url``)."""
        data = self.model_dump(mode="json", include=set(ReplaySpec.model_fields))
        for model in data["models"]:
            urls = model.get("base_url")
            if isinstance(urls, str) and urls:
                model["base_url"] = redacted_url(urls)
            elif isinstance(urls, list):
                model["base_url"] = [redacted_url(url) for url in urls]
        return ReplaySpec.model_validate(data)

    def replay_dict(self) -> dict[str, Any]:
        """``replay_spec()`` as a plain JSON object, every key included."""
        return self.replay_spec().as_dict()

#: the spec table a run option's ``Flag.table`` names -> its record
_TABLES: dict[str, type[_Strict]] = {"task": TaskSpec, "decoding": DecodingSpec, "model": ModelSpec}


def spec_bounds(table: str, key: str) -> tuple[float | None, float | None]:
    """The (minimum, maximum) that spec key ``table.key`` declares with
    pydantic's ``ge``/``le``, so that a flag setting it is refused by the
    parser with the same bounds; (None, None) for a key with none, or whose
    type declares a ``Range`` (checked where the spec is, with a message
    that gives the whole range)."""
    record = _TABLES.get(table)
    info = record.model_fields.get(key) if record is not None else None
    if info is None or any(isinstance(m, Range) for m in info.metadata):
        return None, None
    low = next((m.ge for m in info.metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in info.metadata if isinstance(m, annotated_types.Le)), None)
    return cast("float | None", low), cast("float | None", high)
