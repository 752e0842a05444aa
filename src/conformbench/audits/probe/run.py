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

On engine ``server`` the verdicts are stricter, with "not enforced" beside
them (probe/server.py): a server can drop a schema, or part of one, silently.
Each engine is probed in each selected answer form (``output_formats``):
JSON, and the YAML and XML grammars of engines that have them; the samples
are read by the form's strict parser. A form the engine cannot constrain
is listed with every keyword refused and the reason.

Engine ``server`` is an HTTP server's own structured decoding (the openai
backend): the canary first finds its structured-output dialect, and the
report names the server as it names itself (model list, ``Server`` header,
dialect). Every verdict says the technique it rests on (``TECHNIQUE``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from conformbench.audits.canary import check_canary, grammar_request, read_forced
from conformbench.audits.keyword_classes import keyword_status
from conformbench.audits.probe.cases import PROBE_CASES, ProbeCase
from conformbench.audits.probe.journal import ProbeJournal
from conformbench.audits.probe.logprobs import LOGPROBS_TECHNIQUE, calibrate, generate_with_logprobs, value_overrides
from conformbench.audits.probe.markdown import write_probe
from conformbench.audits.probe.records import (
    PROBE_FORMAT,
    TECHNIQUE,
    EngineProbe,
    KeywordResult,
    ProbeReport,
    ProbeSample,
    Status,
)
from conformbench.audits.probe.server import (
    CUT_RETRY,
    canary_failure_verdict,
    carries_keyword,
    schema_refusal,
    server_verdict,
)
from conformbench.audits.probe.tools import probe_tool_mode
from conformbench.audits.probe.twins import TWIN_TECHNIQUE, twin_verdict
from conformbench.backends.base import Backend, IdentifiesServer, ReachesServer
from conformbench.backends.openai.backend import OpenAICompatBackend
from conformbench.engines.base import engines, form_refusal, schema_text
from conformbench.errors import CanaryFailedError, UnsupportedSchemaError, UsageError
from conformbench.formats.base import format_display_name
from conformbench.records.generation import Constraint, GenerationRequest, GenerationResult, constraint_label
from conformbench.records.prompt import Message, Prompt
from conformbench.records.spec import SERVER_ENGINE
from conformbench.records.tool_calls import parse_tool_mode
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



@dataclass(frozen=True)
class ProbeConfig:
    engines: tuple[str, ...] = ()  # () = every registered engine
    keywords: tuple[str, ...] = ()  # () = every probe case
    n_per_keyword: int = 2
    max_tokens: int = 48
    seed: int = 0
    #: answer forms to probe each engine in (output format names)
    output_formats: tuple[str, ...] = ("json",)
    #: on a server whose logprobs show the model's own choice, read them too (probe/logprobs.py)
    logprobs: bool = True
    #: probe tool arguments through the server's tools API in these modes
    #: (``auto``, ``required,strict``...: tools.py) instead of the engines
    tool_modes: tuple[str, ...] = ()


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
        if name != SERVER_ENGINE:
            engines.get(name)  # unknown names fail here, with a did-you-mean
    return list(config.engines) or engines.names()


def _identity(engine: str) -> tuple[str | None, str | None]:
    """(why the engine is not installed or None, its version); the server's
    version is its report's ``server`` identity."""
    if engine == SERVER_ENGINE:
        return None, None
    impl = engines.get(engine)()
    return impl.availability(), impl.version()


def probe_steps(config: ProbeConfig) -> int:
    """Progress steps of a probe: one per generation on installed engines
    (skipped generations are counted as done when skipped)."""
    per_engine = len(select_cases(config.keywords)) * config.n_per_keyword + 1  # +1: canary
    if config.tool_modes:
        return per_engine * len(config.tool_modes)
    installed = [n for n in _engine_names(config) if _identity(n)[0] is None]
    return sum(per_engine for n in installed for f in _forms(config) if form_refusal(n, f) is None)


def _forms(config: ProbeConfig) -> list[str]:
    from conformbench.formats.base import output_formats

    for name in config.output_formats:
        output_formats.get(name)  # unknown names fail here, with a did-you-mean
    return list(dict.fromkeys(config.output_formats)) or ["json"]


def _in_form(prompt: str, output_format: str) -> str:
    """A nudging prompt asking for the form's text instead of JSON's."""
    return prompt if output_format == "json" else prompt.replace("JSON", format_display_name(output_format))


def _classify(samples: list[ProbeSample], keyword: str, engine: str = "") -> tuple[Status, str]:
    strict = server_verdict(samples, keyword) if engine == SERVER_ENGINE else None
    if strict is not None:
        return strict
    judged = [s for s in samples if s.parsed and s.error is None]
    violating = [s for s in judged if keyword in s.violations]
    status = keyword_status(compiled=1, refused=0, violations_tried=len(judged), let_through=len(violating))
    read = [s.overrides for s in judged if s.overrides is not None]
    if status == "enforced" and read:
        acted = sum(n > 0 for n in read)
        if not acted:  # the model wrote valid values on its own: nothing was tested
            return "inconclusive", (f"0/{len(samples)} outputs violate {keyword}, but the logprobs show the "
                                    "constraint never overrode the model in the value: the model did not try")
        return status, (f"0/{len(samples)} outputs violate {keyword}; the constraint overrode the model's "
                        f"top token in the value of {acted}/{len(read)} (logprobs)")
    if status == "ignored":
        return status, f"{len(violating)}/{len(samples)} outputs violate {keyword}"
    if status == "inconclusive":
        reasons = sorted({s.error or f"unparsable ({s.finish_reason})" for s in samples})
        return status, "no output could be judged: " + "; ".join(reasons)[:300]
    return status, f"0/{len(samples)} outputs violate {keyword} ({len(judged)} judged)"


def _sample(backend: Backend, case: ProbeCase, prompt: str, engine: str, config: ProbeConfig,
            output_format: str, logprobs: bool = False) -> ProbeSample:
    question = Prompt((Message("user", prompt),))
    constraint = Constraint(case.schema, engine, output_format)
    field = next(iter(case.schema.get("properties") or {}), None)
    result, overrides = _generate(backend, grammar_request(question, constraint, config.max_tokens, config.seed),
                                  logprobs, field)
    if engine == SERVER_ENGINE:
        refusal = schema_refusal(result.error if result.finish_reason == "error" else None)
        if refusal is not None:
            raise UnsupportedSchemaError(engine, refusal)
        if result.finish_reason == "length":  # a cut answer cannot be judged: once more, with room
            longer = grammar_request(question, constraint, config.max_tokens * CUT_RETRY, config.seed)
            result, overrides = _generate(backend, longer, logprobs, field)
    parsed = read_forced(result.text, output_format, case.schema)
    found = validator_for(case.schema).violations(parsed.value) if parsed.ok else []
    carried = carries_keyword(result.engine_input, case.keyword) if engine == SERVER_ENGINE else None
    return ProbeSample(
        prompt=prompt, text=result.text, finish_reason=result.finish_reason, parsed=parsed.ok,
        violations=sorted({v.keyword for v in found}), error=result.error, overrides=overrides, carried=carried,
    )


def _generate(backend: Backend, request: GenerationRequest, logprobs: bool,
              field: str | None) -> tuple[GenerationResult, int | None]:
    """The answer, and the constraint's overrides in ``field``'s value where
    logprobs are read (None otherwise)."""
    if logprobs and isinstance(backend, OpenAICompatBackend):
        result, choices = generate_with_logprobs(backend, request)
        return result, None if choices is None else value_overrides(choices, result.text, field)
    return backend.generate(request), None


def _probe_keyword(
    backend: Backend, case: ProbeCase, engine: str, config: ProbeConfig, tick: Callable[[str, int], None],
    output_format: str = "json", logprobs: bool = False, journal: ProbeJournal | None = None,
) -> KeywordResult:
    label = constraint_label(engine, output_format)
    done = journal.done.get((engine, output_format, case.keyword)) if journal else None
    if done is not None:  # written by an interrupted run of the same command
        tick(f"{label} {case.keyword} (resumed)", config.n_per_keyword)
        return KeywordResult.model_validate(done)
    result = _fresh_keyword(backend, case, engine, config, tick, output_format, logprobs)
    if journal is not None:
        journal.record(engine, output_format, case.keyword, result.model_dump(mode="json"))
    return result


def _fresh_keyword(
    backend: Backend, case: ProbeCase, engine: str, config: ProbeConfig, tick: Callable[[str, int], None],
    output_format: str, logprobs: bool,
) -> KeywordResult:
    samples: list[ProbeSample] = []
    label = constraint_label(engine, output_format)
    for i in range(config.n_per_keyword):
        prompt = _in_form(case.prompts[i % len(case.prompts)], output_format)
        try:
            samples.append(_sample(backend, case, prompt, engine, config, output_format, logprobs))
        except UnsupportedSchemaError as exc:
            tick(f"{label} {case.keyword}", config.n_per_keyword - i)
            refused = keyword_status(compiled=0, refused=1, violations_tried=0, let_through=0)
            return KeywordResult(
                keyword=case.keyword, status=refused, detail=exc.reason,
                probe_schema=schema_text(case.schema), samples=[],
            )
        tick(f"{label} {case.keyword}", 1)
    status, detail = _classify(samples, case.keyword, engine)
    read = any(s.overrides is not None for s in samples)
    technique = f"{TECHNIQUE} + {LOGPROBS_TECHNIQUE}" if read else TECHNIQUE
    if status == "inconclusive" and engine == SERVER_ENGINE and output_format == "json" \
            and isinstance(backend, OpenAICompatBackend) and backend.request_body(GenerationRequest(
                prompt=Prompt(()))).get("messages") is not None:  # chat: the twins need a prefill
        tick(f"{label} {case.keyword} (twins)", 0)
        twin, why, pair = twin_verdict(backend, case, config.max_tokens * CUT_RETRY, config.seed)
        samples, technique = [*samples, *pair], f"{technique} + {TWIN_TECHNIQUE}"
        status, detail = twin or status, f"{detail}; twins: {why}"
    return KeywordResult(
        keyword=case.keyword, status=status, detail=detail, probe_schema=schema_text(case.schema),
        samples=samples, technique=technique,
    )


def _probe_engine(
    backend: Backend, engine: str, cases: list[ProbeCase], config: ProbeConfig,
    tick: Callable[[str, int], None], output_format: str = "json", journal: ProbeJournal | None = None,
) -> EngineProbe:
    missing, version = _identity(engine)
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
    refusal = form_refusal(engine, output_format)
    if refusal is not None:
        return EngineProbe(**form, version=version, available=True, reason=refusal,
                           canary="skipped", canary_detail=None, keywords=blank("refused", refusal))
    canary: Literal["passed", "failed"] = "passed"
    failed: str | None = None
    try:
        check_canary(backend, engine, config.seed, output_format)
    except CanaryFailedError as exc:
        canary, failed = "failed", str(exc)
        # a server is judged keyword by keyword even so, unless it ignores the schema
        verdict = canary_failure_verdict(backend, engine, config.seed, config.max_tokens)
        if verdict is not None:
            tick(f"{label} canary", 1 + len(cases) * config.n_per_keyword)
            return EngineProbe(**form, version=version, available=True, reason=None,
                               canary="failed", canary_detail=failed, keywords=blank(*verdict))
    tick(f"{label} canary", 1)
    logprobs = canary == "passed" and config.logprobs and calibrate(backend, engine, config.seed)
    results = [_probe_keyword(backend, case, engine, config, tick, output_format, logprobs, journal)
               for case in cases]
    return EngineProbe(**form, version=version, available=True, reason=None,
                       canary=canary, canary_detail=failed, keywords=results)


def run_probe(
    backend: Backend, config: ProbeConfig, tick: Callable[[str, int], None] | None = None,
    out_dir: Path | None = None,
) -> ProbeReport:
    """Probe every selected engine on every selected keyword. ``tick(label,
    steps)`` reports progress in the units of ``probe_steps``. With
    ``out_dir`` each keyword result is journaled there as it is made and a
    rerun of the same probe skips those already written (probe/journal.py)."""
    if config.n_per_keyword < 1 or config.max_tokens < 1:
        raise UsageError("n_per_keyword and max_tokens must be at least 1")
    cases = select_cases(config.keywords)
    if config.tool_modes:
        return _probe_tools(backend, config, cases, tick or (lambda _label, _steps: None))
    names = _engine_names(config)
    _check_side(backend, names)
    if isinstance(backend, ReachesServer):  # a dead URL is said as such, not as a failed canary
        backend.check_reachable()
    forms = _forms(config)
    step = tick or (lambda _label, _steps: None)
    settings = {"engines": names, "keywords": [c.keyword for c in cases], "n_per_keyword": config.n_per_keyword,
                "max_tokens": config.max_tokens, "seed": config.seed, "output_formats": forms}
    model = backend.metadata()
    journal = None if out_dir is None else ProbeJournal(out_dir, {
        "settings": {**settings, "logprobs": config.logprobs},
        "model": {k: model.get(k) for k in ("model", "model_file", "model_sha256")}})
    probes = [_probe_engine(backend, name, cases, config, step, form, journal) for name in names for form in forms]
    return ProbeReport(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        settings=settings,
        model=model,
        engines=probes,
        server=backend.server_identity() if SERVER_ENGINE in names and isinstance(backend, IdentifiesServer) else None,
    )


def _probe_tools(backend: Backend, config: ProbeConfig, cases: list[ProbeCase],
                 tick: Callable[[str, int], None]) -> ProbeReport:
    """The keyword probe of tool arguments in each of ``config.tool_modes`` (tools.py)."""
    if not backend.manifest.tools:
        raise UsageError(f"--tools probes a server's tools API: the {backend.name} backend sends none "
                         "(use --backend openai --base-url URL)")
    modes = [parse_tool_mode(m) for m in config.tool_modes]
    settings = {"tool_modes": [m.spec for m in modes], "keywords": [c.keyword for c in cases],
                "n_per_keyword": config.n_per_keyword, "max_tokens": config.max_tokens, "seed": config.seed}
    probes = [probe_tool_mode(backend, mode, cases, config.n_per_keyword, config.max_tokens, config.seed, tick)
              for mode in modes]
    return ProbeReport(created=datetime.now(UTC).isoformat(timespec="seconds"), settings=settings,
                       model=backend.metadata(), engines=probes,
                       server=backend.server_identity() if isinstance(backend, IdentifiesServer) else None)


def _check_side(backend: Backend, names: list[str]) -> None:
    """UsageError for an engine the backend cannot decode under (an
    in-process engine on a server, or "server" on a local model)."""
    side = backend.manifest.constraint_side
    for name in names:
        if side == "server" and name != SERVER_ENGINE:
            raise UsageError(f"the {backend.name} backend decodes constraints server-side: "
                             f"probe engine {SERVER_ENGINE!r}, not {name!r}")
        if side == "local" and name == SERVER_ENGINE:
            raise UsageError(f"engine {SERVER_ENGINE!r} is a server's own structured decoding: "
                             "probe it with --backend openai --base-url URL")
