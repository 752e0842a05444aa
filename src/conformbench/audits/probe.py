"""The keyword probe: which JSON Schema keywords each engine enforces,
silently ignores, or refuses at compile time.

For each engine and keyword it generates under the constraint with prompts
that nudge the model to violate the keyword, then validates the output
against the full schema. A keyword is

* refused      the engine would not compile the schema,
* ignored      some output violates the keyword (the engine let it through),
* enforced     no output violates it (K nudged samples: evidence, not proof),
* inconclusive no output could be judged (truncated, unparsable, errors) or
               the engine failed its canary,
* unavailable  the engine is not installed.

Each engine is probed in each selected answer form (``output_formats``):
JSON, and the YAML and XML grammars of engines that have them; the samples
are read by the form's strict parser. A form the engine cannot constrain
is listed with every keyword refused and the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeAlias

from conformbench.audits.canary import check_canary, grammar_request, read_forced
from conformbench.audits.keywords import KeywordStatus, keyword_status
from conformbench.audits.probe_cases import PROBE_CASES, ProbeCase
from conformbench.backends.base import Backend
from conformbench.engines.base import engines, form_refusal, schema_text
from conformbench.errors import CanaryFailedError, UnsupportedSchemaError, UsageError
from conformbench.formats.base import format_display_name
from conformbench.records.base import FrozenRecord
from conformbench.records.generation import Constraint, constraint_label
from conformbench.records.prompt import Message, Prompt
from conformbench.registry import did_you_mean
from conformbench.validator.schema_validator import validator_for

__all__ = [
    "PROBE_FORMAT",
    "EngineProbe",
    "KeywordResult",
    "ProbeConfig",
    "ProbeReport",
    "ProbeSample",
    "probe_steps",
    "run_probe",
    "select_cases",
    "write_probe",
]

PROBE_FORMAT = "conformbench.engines-probe/1"
#: shared with the engine check (audits/keywords.py)
Status: TypeAlias = KeywordStatus


@dataclass(frozen=True)
class ProbeConfig:
    engines: tuple[str, ...] = ()  # () = every registered engine
    keywords: tuple[str, ...] = ()  # () = every probe case
    n_per_keyword: int = 2
    max_tokens: int = 48
    seed: int = 0
    #: answer forms to probe each engine in (output format names)
    output_formats: tuple[str, ...] = ("json",)


_Record = FrozenRecord


class ProbeSample(_Record):
    prompt: str
    text: str
    finish_reason: str
    parsed: bool
    #: keywords of every violation of the full schema
    violations: list[str]
    error: str | None = None


class KeywordResult(_Record):
    keyword: str
    status: Status
    detail: str
    probe_schema: str
    samples: list[ProbeSample]


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


def select_cases(keywords: Sequence[str]) -> list[ProbeCase]:
    """The probe cases for ``keywords`` (all when empty); UsageError with a
    did-you-mean for a keyword without a probe."""
    by_name = {case.keyword: case for case in PROBE_CASES}
    for name in keywords:
        if name not in by_name:
            hint = did_you_mean(name, list(by_name))
            raise UsageError(f"no probe for keyword {name!r}{hint}; known: {', '.join(by_name)}")
    return [by_name[k] for k in keywords] if keywords else list(PROBE_CASES)


def _engine_names(config: ProbeConfig) -> list[str]:
    for name in config.engines:
        engines.get(name)  # unknown names fail here, with a did-you-mean
    return list(config.engines) or engines.names()


def probe_steps(config: ProbeConfig) -> int:
    """Progress steps of a probe: one per generation on installed engines
    (skipped generations are counted as done when skipped)."""
    per_engine = len(select_cases(config.keywords)) * config.n_per_keyword + 1  # +1: canary
    installed = [n for n in _engine_names(config) if engines.get(n)().availability() is None]
    return sum(per_engine for n in installed for f in _forms(config) if form_refusal(n, f) is None)


def _forms(config: ProbeConfig) -> list[str]:
    from conformbench.formats.base import output_formats

    for name in config.output_formats:
        output_formats.get(name)  # unknown names fail here, with a did-you-mean
    return list(dict.fromkeys(config.output_formats)) or ["json"]


def _in_form(prompt: str, output_format: str) -> str:
    """A nudging prompt asking for the form's text instead of JSON's."""
    return prompt if output_format == "json" else prompt.replace("JSON", format_display_name(output_format))


def _classify(samples: list[ProbeSample], keyword: str) -> tuple[Status, str]:
    judged = [s for s in samples if s.parsed and s.error is None]
    violating = [s for s in judged if keyword in s.violations]
    status = keyword_status(compiled=1, refused=0, violations_tried=len(judged), let_through=len(violating))
    if status == "ignored":
        return status, f"{len(violating)}/{len(samples)} outputs violate {keyword}"
    if status == "inconclusive":
        reasons = sorted({s.error or f"unparsable ({s.finish_reason})" for s in samples})
        return status, "no output could be judged: " + "; ".join(reasons)[:300]
    return status, f"0/{len(samples)} outputs violate {keyword} ({len(judged)} judged)"


def _sample(backend: Backend, case: ProbeCase, prompt: str, engine: str, config: ProbeConfig,
            output_format: str) -> ProbeSample:
    question = Prompt((Message("user", prompt),))
    constraint = Constraint(case.schema, engine, output_format)
    request = grammar_request(question, constraint, config.max_tokens, config.seed)
    result = backend.generate(request)
    parsed = read_forced(result.text, output_format, case.schema)
    if not parsed.ok:
        return ProbeSample(
            prompt=prompt, text=result.text, finish_reason=result.finish_reason,
            parsed=False, violations=[], error=result.error,
        )
    found = validator_for(case.schema).violations(parsed.value)
    return ProbeSample(
        prompt=prompt, text=result.text, finish_reason=result.finish_reason, parsed=True,
        violations=sorted({v.keyword for v in found}), error=result.error,
    )


def _probe_keyword(
    backend: Backend, case: ProbeCase, engine: str, config: ProbeConfig, tick: Callable[[str, int], None],
    output_format: str = "json",
) -> KeywordResult:
    samples: list[ProbeSample] = []
    label = constraint_label(engine, output_format)
    for i in range(config.n_per_keyword):
        prompt = _in_form(case.prompts[i % len(case.prompts)], output_format)
        try:
            samples.append(_sample(backend, case, prompt, engine, config, output_format))
        except UnsupportedSchemaError as exc:
            tick(f"{label} {case.keyword}", config.n_per_keyword - i)
            refused = keyword_status(compiled=0, refused=1, violations_tried=0, let_through=0)
            return KeywordResult(
                keyword=case.keyword, status=refused, detail=exc.reason,
                probe_schema=schema_text(case.schema), samples=[],
            )
        tick(f"{label} {case.keyword}", 1)
    status, detail = _classify(samples, case.keyword)
    return KeywordResult(
        keyword=case.keyword, status=status, detail=detail,
        probe_schema=schema_text(case.schema), samples=samples,
    )


def _probe_engine(
    backend: Backend, engine: str, cases: list[ProbeCase], config: ProbeConfig,
    tick: Callable[[str, int], None], output_format: str = "json",
) -> EngineProbe:
    impl = engines.get(engine)()
    missing = impl.availability()
    label = constraint_label(engine, output_format)
    form = {"engine": engine, "output_format": output_format}

    def blank(status: Status, detail: str) -> list[KeywordResult]:
        return [
            KeywordResult(keyword=c.keyword, status=status, detail=detail,
                          probe_schema=schema_text(c.schema), samples=[])
            for c in cases
        ]

    if missing is not None:
        return EngineProbe(**form, version=None, available=False, reason=missing,
                           canary="skipped", canary_detail=None, keywords=blank("unavailable", missing))
    refusal = impl.form_refusal(output_format)
    if refusal is not None:
        return EngineProbe(**form, version=impl.version(), available=True, reason=refusal,
                           canary="skipped", canary_detail=None, keywords=blank("refused", refusal))
    try:
        check_canary(backend, engine, config.seed, output_format)
    except CanaryFailedError as exc:
        tick(f"{label} canary", 1 + len(cases) * config.n_per_keyword)
        return EngineProbe(**form, version=impl.version(), available=True, reason=None,
                           canary="failed", canary_detail=str(exc),
                           keywords=blank("inconclusive", "canary failed: constraint not applied"))
    tick(f"{label} canary", 1)
    results = [_probe_keyword(backend, case, engine, config, tick, output_format) for case in cases]
    return EngineProbe(**form, version=impl.version(), available=True, reason=None,
                       canary="passed", canary_detail=None, keywords=results)


def run_probe(
    backend: Backend, config: ProbeConfig, tick: Callable[[str, int], None] | None = None
) -> ProbeReport:
    """Probe every selected engine on every selected keyword. ``tick(label,
    steps)`` reports progress in the units of ``probe_steps``."""
    if config.n_per_keyword < 1 or config.max_tokens < 1:
        raise UsageError("n_per_keyword and max_tokens must be at least 1")
    cases = select_cases(config.keywords)
    names = _engine_names(config)
    forms = _forms(config)
    step = tick or (lambda _label, _steps: None)
    probes = [_probe_engine(backend, name, cases, config, step, form) for name in names for form in forms]
    return ProbeReport(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        settings={
            "engines": names,
            "keywords": [c.keyword for c in cases],
            "n_per_keyword": config.n_per_keyword,
            "max_tokens": config.max_tokens,
            "seed": config.seed,
            "output_formats": forms,
        },
        model=backend.metadata(),
        engines=probes,
    )


def _markdown(report: ProbeReport) -> str:
    names = [constraint_label(e.engine, e.output_format) for e in report.engines]
    lines = [
        "# Constraint engine keyword probe",
        "",
        (
            f"Model: {report.model.get('model_file') or report.model.get('model')} "
            f"(sha256 {report.model.get('model_sha256')}); "
            f"{report.settings['n_per_keyword']} nudged sample(s) per keyword, "
            f"max_tokens {report.settings['max_tokens']}, greedy."
        ),
        "",
        "| keyword | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for keyword in report.settings["keywords"]:
        cells = []
        for probe in report.engines:
            result = next(r for r in probe.keywords if r.keyword == keyword)
            cells.append(result.status)
        lines.append(f"| {keyword} | " + " | ".join(cells) + " |")
    lines += ["", "| engine | version | canary | note |", "|---|---|---|---|"]
    for probe in report.engines:
        note = (probe.reason or probe.canary_detail or "").replace("|", "\\|")
        name = constraint_label(probe.engine, probe.output_format)
        lines.append(f"| {name} | {probe.version or '-'} | {probe.canary} | {note} |")
    lines += [
        "",
        (
            "enforced: no nudged output violated the keyword; ignored: an output violated it "
            "(the engine let it through); refused: the engine would not compile the schema; "
            "inconclusive: no output could be judged. Details per sample in engines.json."
        ),
        "",
    ]
    return "\n".join(lines)


def write_probe(report: ProbeReport, out_dir: Path) -> tuple[Path, Path]:
    """Write DIR/engines.json and DIR/engines.md; returns both paths."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        json_path, md_path = out_dir / "engines.json", out_dir / "engines.md"
        json_path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        md_path.write_text(_markdown(report), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the probe to {out_dir}: {exc.strerror or exc}") from None
    return json_path, md_path
