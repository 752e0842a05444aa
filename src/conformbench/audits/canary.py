"""The canary self test: proof that a constraint is really applied.

A constraint can fail silently (an exception inside llama.cpp's sampler
callback is printed and ignored, a server ignores an unknown field), and the
unconstrained output may still happen to be valid JSON. So before a live run
each engine must force a random constant that the model would never write
unprompted, with a prompt that does not mention it. If the output is not
exactly that constant, the engine is not applied and the run refuses.

An engine that constrains more than JSON (llguidance's YAML and XML
grammars) is checked in each answer form a run constrains: the same constant
in that form, read back by the form's strict parser.

The same request finds an HTTP server's structured-output dialect when the
run names none: it is sent in each dialect until one forces the constant.
"""

from __future__ import annotations

import json
import random
import re
import string
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from conformbench.backends.base import Backend, DetectsDialect
from conformbench.errors import CanaryFailedError, UnsupportedSchemaError
from conformbench.formats.base import ParsedOutput, output_formats
from conformbench.jsontypes import Schema
from conformbench.records.generation import (
    Constraint,
    DecodingSettings,
    GenerationRequest,
    GenerationResult,
    constraint_label,
)
from conformbench.records.prompt import CANARY_PROMPT, Prompt
from conformbench.records.spec import SERVER_ENGINE

__all__ = [
    "CanaryResult",
    "canary_constant",
    "canary_schema",
    "check_canary",
    "detect_dialect",
    "grammar_request",
    "read_forced",
    "server_error_text",
]

_MAX_TOKENS = 64


@dataclass(frozen=True)
class CanaryResult:
    engine: str
    constant: str
    text: str
    finish_reason: str
    seconds: float
    #: how an HTTP server's structured-output dialect was chosen (engine "server")
    dialect: str | None = None
    #: the answer form forced (recorded only where it is not JSON)
    output_format: str = "json"

    @property
    def label(self) -> str:
        """The verdict's key in ModelRecord.canary: ``engine`` or ``engine/form``."""
        return constraint_label(self.engine, self.output_format)

    def as_record(self) -> dict[str, Any]:
        """For ModelRecord.canary in the replay file."""
        record = {"passed": True, **asdict(self)}
        if self.output_format == "json":
            del record["output_format"]
        return record


def canary_constant(rng_seed: int) -> str:
    rng = random.Random(rng_seed)
    return "cb-" + "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(12))


def canary_schema(constant: str) -> Schema:
    return {
        "type": "object",
        "properties": {"canary": {"const": constant}},
        "required": ["canary"],
        "additionalProperties": False,
    }


def grammar_request(prompt: Prompt, constraint: Constraint, max_tokens: int, seed: int,
                    beams: int = 1) -> GenerationRequest:
    """Greedy (or beam search, as the run decodes), seeded generation under
    ``constraint``: the canary and the keyword probe judge the engine, so
    nothing may be left to sampling."""
    return GenerationRequest(
        prompt=prompt,
        settings=DecodingSettings(max_tokens=max_tokens, temperature=0.0, seed=seed, beams=beams),
        constraint=constraint,
    )


def read_forced(text: str, output_format: str, schema: Schema) -> ParsedOutput:
    """The answer's data in its form: JSON as json.loads reads it (the
    whole text), other forms by their strict parser."""
    if output_format == "json":
        try:
            return ParsedOutput(ok=True, value=json.loads(text), source="raw")
        except ValueError as exc:
            return ParsedOutput(ok=False, error=str(exc))
    return output_formats.get(output_format)().parse(text, schema)


def _judge(expected: dict[str, str], output_format: str = "json") -> Callable[[GenerationResult], str | None]:
    """None when ``result`` is exactly the canary object, else why not (short)."""
    schema = canary_schema(expected["canary"])

    def not_applied(result: GenerationResult) -> str | None:
        if result.finish_reason == "error":
            return f"error: {server_error_text(result.error or '')}"
        parsed = read_forced(result.text, output_format, schema)
        if not parsed.ok or parsed.value != expected:
            return f"got {result.text[:80]!r} (finish {result.finish_reason})"
        return None

    return not_applied


_MESSAGE = re.compile(r'"(?:message|detail|msg)"\s*:\s*"((?:[^"\\]|\\.)*)"')
_ERROR_CHARS = 240


def server_error_text(error: str) -> str:
    """A server's error, short and whole: the message of a JSON error body
    (``HTTP 400: {"error": {"message": ...}}``) rather than its first
    characters cut mid-JSON, else the text cut at a word with an ellipsis."""
    head, brace, body = error.partition("{")
    if brace:
        found = _MESSAGE.search(body)
        if found:
            try:
                message = json.loads(f'"{found.group(1)}"')
            except ValueError:
                message = found.group(1)
            error = f"{head.strip().rstrip(':')}: {message}" if head.strip() else message
    error = " ".join(error.split())
    if len(error) <= _ERROR_CHARS:
        return error
    return error[:_ERROR_CHARS].rsplit(" ", 1)[0] + " …"


def _server_dialects(backend: Backend, engine: str) -> bool:
    return engine == SERVER_ENGINE and isinstance(backend, DetectsDialect)


def _dialect_hint(detected: bool) -> str:
    if detected:
        return ("; if the server takes a dialect not listed, or ignores them all, see "
                "docs/runtime.md (--dialect names one)")
    return ("; the server may take another structured-output dialect: leave --dialect out to "
            "detect it, or see docs/runtime.md")


def _generate(backend: Backend, engine: str, request: GenerationRequest,
              judge: Callable[[GenerationResult], str | None]) -> tuple[GenerationResult, bool]:
    """The canary's generation, and whether it detected a dialect on the way."""
    if engine == SERVER_ENGINE and isinstance(backend, DetectsDialect) and backend.dialect_pending:
        return backend.detect_dialect(request, judge), True
    return backend.generate(request), False


def _expected_text(constant: str, output_format: str) -> str:
    if output_format == "json":
        return json.dumps({"canary": constant})
    return repr(output_formats.get(output_format)().dump({"canary": constant}, canary_schema(constant)).strip())


def check_canary(backend: Backend, engine: str, rng_seed: int, output_format: str = "json",
                 beams: int = 1) -> CanaryResult:
    """Generate under ``engine`` with the canary schema, answers forced into
    ``output_format`` and decoded as the run decodes (``beams``);
    CanaryFailedError naming the engine (and form) unless
    the output parses to exactly the constant. For engine "server" on a
    backend whose dialect is not set yet, this request also finds the
    dialect (``DetectsDialect``)."""
    constant = canary_constant(rng_seed)
    constraint = Constraint(canary_schema(constant), engine, output_format)
    request = grammar_request(CANARY_PROMPT, constraint, _MAX_TOKENS, rng_seed, beams)
    judge = _judge({"canary": constant}, output_format)
    name = f"engine {engine!r}" + ("" if output_format == "json" else f" ({output_format} answers)")
    start = time.perf_counter()
    try:
        result, detected = _generate(backend, engine, request, judge)
    except UnsupportedSchemaError as exc:
        raise CanaryFailedError(f"canary failed for {name}: {exc}") from None
    seconds = time.perf_counter() - start
    why = judge(result)
    if why is not None:
        detail = f"; error: {result.error}" if result.error else ""
        hint = _dialect_hint(detected) if _server_dialects(backend, engine) else ""
        raise CanaryFailedError(
            f"canary failed for {name}: the constraint is not applied "
            f"(expected {_expected_text(constant, output_format)}, got {result.text[:120]!r}, "
            f"finish {result.finish_reason}{detail}){hint}"
        )
    dialect = backend.dialect_summary if isinstance(backend, DetectsDialect) and engine == SERVER_ENGINE else None
    return CanaryResult(engine, constant, result.text, result.finish_reason, seconds, dialect, output_format)


def detect_dialect(backend: Backend, rng_seed: int) -> str | None:
    """Find the dialect with the canary's request when the canary itself is
    turned off (a run still needs the dialect); None when nothing was to be
    found. CanaryFailedError when no dialect is applied."""
    if not (isinstance(backend, DetectsDialect) and backend.dialect_pending):
        return None
    return check_canary(backend, SERVER_ENGINE, rng_seed).dialect
