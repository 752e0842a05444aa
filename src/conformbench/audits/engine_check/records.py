"""Records of the engine check (DIR/engines-check.json)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from conformbench.audits.keyword_classes import KeywordStatus
from conformbench.records.base import FrozenRecord

__all__ = [
    "ENGINE_CHECK_FORMAT",
    "CaseResult",
    "CheckSettings",
    "EngineCheckReport",
    "EngineResult",
    "GroupResult",
    "Refusal",
    "SourceResult",
    "Timing",
    "TokenizerInfo",
]

ENGINE_CHECK_FORMAT = "conformbench.engines-check/1"

_Record = FrozenRecord


class CaseResult(_Record):
    """A document the grammar judged wrongly: a valid one it rejects
    (``over``: over-constrained) or an invalid one it accepts (``under``)."""

    schema_id: str
    group: str
    description: str
    verdict: Literal["over", "under"]
    serialisation: str
    #: the document as fed to the tokenizer (cut at 300 characters)
    document: str
    tokens: int
    #: where the walk ended ("token 3 of 7 refused: '\"x'", "accepted")
    detail: str


class Refusal(_Record):
    schema_id: str
    group: str
    reason: str
    #: the compile was stopped at the time limit (outlines' index builds)
    timed_out: bool


class GroupResult(_Record):
    """One keyword group: a test-suite file (``minLength``), or the keyword
    an oracle instance violates."""

    group: str
    schemas: int
    refused: int
    #: documents judged under compiled schemas
    valid: int
    invalid: int
    over: int
    under: int
    status: KeywordStatus


class Timing(_Record):
    n: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None


class SourceResult(_Record):
    """One engine on one schema set."""

    source: str
    draft: str
    schemas: int
    compiled: int
    refused: int
    #: of ``refused``: stopped at the compile time limit
    timed_out: int
    #: documents judged (under compiled schemas) and how
    valid: int
    invalid: int
    over: int
    under: int
    #: documents of refused schemas (not judged)
    unjudged: int
    #: schemas that had no document to judge (real schemas the oracle could not instance)
    without_documents: int
    #: compiled schemas only
    compile: Timing
    #: the full next-token mask, at sampled positions of each schema's first valid document
    mask: Timing
    seconds: float
    groups: list[GroupResult]
    refusals: list[Refusal]
    cases: list[CaseResult]
    #: compiled schemas with documents, every one judged right (empirical coverage's count)
    right: int = 0

    @property
    def coverage(self) -> float | None:
        return self.compiled / self.schemas if self.schemas else None

    @property
    def compliance(self) -> float | None:
        judged = self.valid + self.invalid
        return (judged - self.over - self.under) / judged if judged else None

    # JSONSchemaBench's terms, per schema: declared coverage is ``coverage``
    # (the schema compiles); a schema counts for empirical coverage when the
    # engine judged every one of its documents right

    @property
    def empirical_coverage(self) -> float | None:
        return self.right / self.schemas if self.schemas else None

    @property
    def schema_compliance(self) -> float | None:
        """Empirical over declared coverage: of the compiled schemas, those
        whose every document was judged right."""
        return self.right / self.compiled if self.compiled else None


class EngineResult(_Record):
    engine: str
    version: str | None
    available: bool
    reason: str | None
    #: drafts the engine documents support for (the test suite runs those)
    drafts: list[str]
    #: one-time work before the first schema (tokenizer bridge, worker process), untimed per schema
    setup_seconds: float
    sources: list[SourceResult]
    #: schemas whose outcome was read from an earlier, interrupted check in the
    #: same directory (their timings were measured then)
    resumed: int = 0
    #: keyword -> status from a keyword probe run with a model (``--probe``), when given
    probe: dict[str, KeywordStatus] = Field(default_factory=dict)


class CheckSettings(_Record):
    engines: list[str]
    sources: list[str]
    serialisations: list[str]
    mask_positions: int
    compile_timeout_s: float | None
    limit: int | None
    #: installed engines the default check left out (no engine named), with why
    left_out: dict[str, str] = Field(default_factory=dict)


class TokenizerInfo(_Record):
    model_file: str
    n_vocab: int


class EngineCheckReport(_Record):
    format: str = ENGINE_CHECK_FORMAT
    created: str
    settings: CheckSettings
    tokenizer: TokenizerInfo
    engines: list[EngineResult]
    #: source name -> entries that were not schemas, with why
    excluded: dict[str, list[str]]
    seconds: float
    #: where the probe statuses come from (file, model), when given
    probe_source: str | None = None
