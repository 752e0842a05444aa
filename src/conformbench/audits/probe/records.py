"""The keyword probe's records (engines.json), its format name and the
technique its verdicts rest on."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from conformbench.audits.keyword_classes import KeywordStatus
from conformbench.records.base import OMITTED_AT_DEFAULT, FrozenRecord, SparseRecord

__all__ = ["PROBE_FORMAT", "TECHNIQUE", "EngineProbe", "KeywordResult", "ProbeReport", "ProbeSample", "Status"]

PROBE_FORMAT = "conformbench.engines-probe/1"
#: how every verdict here is reached: greedy generations under the
#: constraint, prompted to break the keyword, validated against the full
#: schema; on a server, logprobs may add a second technique (probe/logprobs.py)
TECHNIQUE = "nudged generation"
#: shared with the engine check (audits/keyword_classes.py)
Status: TypeAlias = KeywordStatus


_Record = FrozenRecord


class ProbeSample(SparseRecord):
    prompt: str
    text: str
    finish_reason: str
    parsed: bool
    #: keywords of every violation of the full schema
    violations: list[str]
    error: str | None = None
    #: overrides of the model's top token in the keyword's value (logprobs; None: not read)
    overrides: int | None = None
    #: engine "server": whether the request body sent carried the keyword (None: not a server)
    carried: bool | None = None
    #: a greedy twin's answer (probe/twins.py), without or with the schema; None: a nudged sample
    twin: Annotated[Literal["free", "constrained"] | None, OMITTED_AT_DEFAULT] = None


class KeywordResult(_Record):
    keyword: str
    status: Status
    detail: str
    probe_schema: str
    samples: list[ProbeSample]
    #: what the verdict rests on (``TECHNIQUE``)
    technique: str = TECHNIQUE


class EngineProbe(_Record):
    engine: str
    #: the answer form the engine was made to force
    output_format: str = "json"
    version: str | None
    available: bool
    reason: str | None
    canary: Literal["passed", "failed", "skipped"]
    canary_detail: str | None
    keywords: list[KeywordResult]


class ProbeReport(_Record):
    format: str = PROBE_FORMAT
    created: str
    settings: dict[str, Any]
    model: dict[str, Any]
    engines: list[EngineProbe]
    #: engine "server": the server as it names itself (``server_identity``)
    server: dict[str, Any] | None = None
